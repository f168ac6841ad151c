package types

// A bulk load's timestamps are almost all in one shape, the one Postgres
// and Sluice print: "YYYY-MM-DD HH:MM:SS" with up to six fraction digits.
// The general lexer (lexDateTime) took 90 ns for each (a tenth of a COPY
// of bids' parsing); isoTimestampMicros reads that shape directly and
// leaves everything else, including what it could read but would have to
// judge (year 0, hour 24, second 60, seven fraction digits), to it.

// isoTimestampMicros parses s if it is exactly a canonical timestamp
// without time zone of a real date and time, returning microseconds
// since 2000-01-01 as parseTimestampMicros would; ok is false otherwise.
func isoTimestampMicros(s string) (us int64, ok bool) {
	if len(s) != 19 && (len(s) < 21 || len(s) > 26 || s[19] != '.') {
		return 0, false
	}
	if s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	c, y1 := twoDigits(s, 0)
	yy, y2 := twoDigits(s, 2)
	m, okM := twoDigits(s, 5)
	d, okD := twoDigits(s, 8)
	h, okH := twoDigits(s, 11)
	mi, okMi := twoDigits(s, 14)
	sec, okS := twoDigits(s, 17)
	y := c*100 + yy
	if !(y1 && y2 && okM && okD && okH && okMi && okS) || y == 0 || m < 1 || m > 12 || d < 1 ||
		d > daysInMonth(y, m) || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	frac := int64(0)
	if len(s) > 19 {
		n, ok := fixedDigits(s[20:])
		if !ok {
			return 0, false
		}
		frac = n * fracScale[len(s)-21]
	}
	clock := h*MicrosPerHour + mi*MicrosPerMinute + sec*MicrosPerSecond + frac
	return (daysFromCivil(y, m, d)-TimestampEpochDays)*MicrosPerDay + clock, true
}

// fracScale[k] turns a fraction of k+1 digits into microseconds.
var fracScale = [6]int64{100000, 10000, 1000, 100, 10, 1}

// twoDigits reads s[i:i+2] as a two-digit decimal number.
func twoDigits(s string, i int) (int64, bool) {
	a, b := s[i]-'0', s[i+1]-'0'
	return int64(a)*10 + int64(b), a <= 9 && b <= 9
}

// fixedDigits reads s, all ASCII digits, as a decimal number.
func fixedDigits(s string) (int64, bool) {
	n := int64(0)
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	return n, true
}
