package types

import "strconv"

// Output in Postgres's ISO DateStyle: 2024-02-29, 13:05:00.5,
// 2024-02-29 13:05:00.5, 2024-02-29 13:05:00.5+00 with TimeZone UTC, and
// " BC" after the whole value for years before 1 AD.

func appendDate(dst []byte, d DDate) []byte {
	switch d {
	case DateInfinity:
		return append(dst, "infinity"...)
	case DateNegInfinity:
		return append(dst, "-infinity"...)
	}
	y, m, dd := d.YMD()
	dst = appendYMD(dst, y, m, dd)
	return appendBC(dst, y)
}

// appendYMD writes the date part with BC years shown as positive numbers.
func appendYMD(dst []byte, y, m, d int) []byte {
	if y <= 0 {
		y = 1 - y
	}
	dst = appendPadded(dst, int64(y), 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, int64(m), 2)
	dst = append(dst, '-')
	return appendPadded(dst, int64(d), 2)
}

func appendBC(dst []byte, y int) []byte {
	if y <= 0 {
		return append(dst, " BC"...)
	}
	return dst
}

// appendPadded writes a non-negative n with at least width digits.
func appendPadded(dst []byte, n int64, width int) []byte {
	var scratch [20]byte
	digits := strconv.AppendInt(scratch[:0], n, 10)
	for i := len(digits); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

func appendTime(dst []byte, t DTime) []byte {
	return appendClock(dst, uint64(t))
}

// appendClock writes HH:MM:SS and the fraction of a non-negative number of
// microseconds, trailing zeros of the fraction dropped. Hours may exceed
// two digits (intervals).
func appendClock(dst []byte, us uint64) []byte {
	h := us / uint64(MicrosPerHour)
	rest := int64(us - h*uint64(MicrosPerHour))
	m := rest / MicrosPerMinute
	rest -= m * MicrosPerMinute
	dst = appendPadded(dst, int64(h), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, ':')
	return appendSeconds(dst, rest)
}

// appendSeconds writes SS[.ffffff] for a number of microseconds below a
// minute.
func appendSeconds(dst []byte, us int64) []byte {
	dst = appendPadded(dst, us/MicrosPerSecond, 2)
	frac := us % MicrosPerSecond
	if frac == 0 {
		return dst
	}
	width := 6
	for frac%10 == 0 {
		frac /= 10
		width--
	}
	dst = append(dst, '.')
	return appendPadded(dst, frac, width)
}

// appendTimestamp writes a timestamp, with the +00 zone for timestamptz.
func appendTimestamp(dst []byte, us int64, tz bool) []byte {
	switch us {
	case int64(TimestampInfinity):
		return append(dst, "infinity"...)
	case int64(TimestampNegInfinity):
		return append(dst, "-infinity"...)
	}
	days := floorDiv(us, MicrosPerDay)
	y, m, d := civilFromDays(days + TimestampEpochDays)
	dst = appendYMD(dst, int(y), int(m), int(d))
	dst = append(dst, ' ')
	dst = appendClock(dst, uint64(us-days*MicrosPerDay))
	if tz {
		dst = append(dst, "+00"...)
	}
	return appendBC(dst, int(y))
}
