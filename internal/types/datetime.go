package types

import (
	"math"
	"time"
)

// Calendar arithmetic for dates and timestamps. Sluice, like Postgres,
// uses the proleptic Gregorian calendar with astronomical year numbering
// inside (year 0 is 1 BC) and prints BC years the Postgres way.

// Special values. They are the same sentinels Postgres uses internally
// (DATEVAL_NOBEGIN/NOEND, DT_NOBEGIN/NOEND), so they sort before and after
// every finite value under Compare without special cases.
const (
	DateNegInfinity        = DDate(math.MinInt32)
	DateInfinity           = DDate(math.MaxInt32)
	TimestampNegInfinity   = DTimestamp(math.MinInt64)
	TimestampInfinity      = DTimestamp(math.MaxInt64)
	TimestamptzNegInfinity = DTimestamptz(math.MinInt64)
	TimestamptzInfinity    = DTimestamptz(math.MaxInt64)
)

// Supported ranges, Postgres's: from 4714-11-24 BC (Julian day 0) to
// 5874897-12-31 for dates and to 294276-12-31 23:59:59.999999 for
// timestamps. Dates count days from 1970-01-01; timestamps count
// microseconds from 2000-01-01, as Postgres's do (an int64 of microseconds
// from 1970 would stop 30 years short). Day counts below are from 1970.
const (
	minDateDays      = -2440588   // 4714-11-24 BC, Julian day 0
	maxDateDays      = 2145042905 // 5874897-12-31
	minTimestampDays = minDateDays
	maxTimestampDays = 106762940 // 294277-01-01, exclusive
	// TimestampEpochDays is the day count (from 1970) of 2000-01-01, the
	// day timestamps count from.
	TimestampEpochDays = 10957
	// TimestampEpochSeconds is the Unix time of 2000-01-01 00:00:00 UTC.
	TimestampEpochSeconds = TimestampEpochDays * 86400
	// MinTimestampMicros and EndTimestampMicros bound the finite
	// timestamps (the second is exclusive).
	MinTimestampMicros = (minTimestampDays - TimestampEpochDays) * MicrosPerDay
	EndTimestampMicros = (maxTimestampDays - TimestampEpochDays) * MicrosPerDay
	// MicrosPerDayTime is the largest DTime: 24:00:00, which Postgres
	// accepts and keeps.
	MicrosPerDayTime = DTime(MicrosPerDay)
)

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (astronomical year). It is exact for every int32 year.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400 // [0, 399]
	mp := (m + 9) % 12 // March = 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(days int64) (y, m, d int64) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysInMonth returns the length of month m of astronomical year y.
func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// DateFromYMD builds a date from an astronomical year (0 is 1 BC), a month
// and a day, reporting false when the date does not exist or is outside the
// supported range.
func DateFromYMD(year, month, day int) (DDate, bool) {
	if month < 1 || month > 12 || day < 1 || int64(day) > daysInMonth(int64(year), int64(month)) {
		return 0, false
	}
	days := daysFromCivil(int64(year), int64(month), int64(day))
	if days < minDateDays || days > maxDateDays {
		return 0, false
	}
	return DDate(days), true
}

// YMD returns the date's astronomical year, month and day. It is
// meaningless for the infinities.
func (d DDate) YMD() (year, month, day int) {
	y, m, dd := civilFromDays(int64(d))
	return int(y), int(m), int(dd)
}

// IsFinite reports whether d is neither infinity nor -infinity.
func (d DDate) IsFinite() bool { return d != DateInfinity && d != DateNegInfinity }

// IsFinite reports whether x is neither infinity nor -infinity.
func (x DTimestamp) IsFinite() bool { return x != TimestampInfinity && x != TimestampNegInfinity }

// IsFinite reports whether x is neither infinity nor -infinity.
func (x DTimestamptz) IsFinite() bool {
	return x != TimestamptzInfinity && x != TimestamptzNegInfinity
}

// DateFromTime returns the calendar date of t in t's own location.
func DateFromTime(t time.Time) DDate {
	y, m, d := t.Date()
	return DDate(daysFromCivil(int64(y), int64(m), int64(d)))
}

// Time returns midnight UTC at the start of d, for calendar arithmetic
// with the time package. Check IsFinite first: the infinities have no
// time.Time.
func (d DDate) Time() time.Time {
	y, m, dd := d.YMD()
	return time.Date(y, time.Month(m), dd, 0, 0, 0, 0, time.UTC)
}

// TimestampFromTime returns t's wall clock reading in t's own location,
// truncated to microseconds.
func TimestampFromTime(t time.Time) DTimestamp {
	days := daysFromCivil(int64(t.Year()), int64(t.Month()), int64(t.Day()))
	h, m, s := t.Clock()
	micros := int64(h)*MicrosPerHour + int64(m)*MicrosPerMinute + int64(s)*MicrosPerSecond +
		int64(t.Nanosecond()/1000)
	return DTimestamp((days-TimestampEpochDays)*MicrosPerDay + micros)
}

// Time returns the timestamp's wall clock reading as a UTC time.Time.
// Check IsFinite first.
func (x DTimestamp) Time() time.Time { return microsToUTC(int64(x)) }

// TimestamptzFromTime returns the instant t, truncated to microseconds.
func TimestamptzFromTime(t time.Time) DTimestamptz {
	return DTimestamptz(int64(TimestampFromTime(t.UTC())))
}

// Time returns the instant as a UTC time.Time. Check IsFinite first.
func (x DTimestamptz) Time() time.Time { return microsToUTC(int64(x)) }

// microsToUTC returns timestamp micros (from 2000) as a UTC time.Time. It
// splits days from the time of day, so neither the epoch's offset nor
// time.UnixMicro's nanoseconds can overflow far from 2000.
func microsToUTC(us int64) time.Time {
	days := floorDiv(us, MicrosPerDay)
	rem := us - days*MicrosPerDay
	y, m, d := civilFromDays(days + TimestampEpochDays)
	return time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).
		Add(time.Duration(rem) * time.Microsecond)
}

// DTimeOf returns the time of day of t (its wall clock, in its location).
func DTimeOf(t time.Time) DTime {
	h, m, s := t.Clock()
	return DTime(int64(h)*MicrosPerHour + int64(m)*MicrosPerMinute + int64(s)*MicrosPerSecond +
		int64(t.Nanosecond()/1000))
}
