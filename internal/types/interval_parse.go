package types

import (
	"math"
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Interval input, as Postgres's interval_in reads it with IntervalStyle
// postgres: a sequence of "number unit" pairs (1 day, 2 hours, 1.5 days,
// 24h, 3 mons, -1 week), clock fields (01:02:03.5, -01:00), a bare number
// before a clock as days (1 12:00:00), a trailing bare number as seconds,
// year-month fields (1-2), a leading "@" and a trailing "ago" that negates
// everything; or ISO 8601 with designators (P1Y2M3DT4H5M6S, PT1.5S).
// Each unit may appear once. Fractions cascade down as in Postgres: a
// fraction of a month becomes 30-day days and then time, a fraction of a
// day becomes time, a fraction of a year becomes whole months.

// ivUnit is an interval unit: how many months, days or microseconds one of
// it is (exactly one of the three is non-zero).
type ivUnit struct {
	months, days, micros int64
	bit                  uint16 // for rejecting a repeated unit
}

var ivSecond = ivUnit{micros: MicrosPerSecond, bit: 1 << 2}

// ivUnitByName maps Postgres's interval unit spellings.
func ivUnitByName(w string) (ivUnit, bool) {
	switch w {
	case "microsecond", "microseconds", "us", "usec", "usecs", "microsecon":
		return ivUnit{micros: 1, bit: 1 << 0}, true
	case "millisecond", "milliseconds", "ms", "msec", "msecs", "millisecon":
		return ivUnit{micros: 1000, bit: 1 << 1}, true
	case "second", "seconds", "s", "sec", "secs":
		return ivSecond, true
	case "minute", "minutes", "m", "min", "mins":
		return ivUnit{micros: MicrosPerMinute, bit: 1 << 3}, true
	case "hour", "hours", "h", "hr", "hrs":
		return ivUnit{micros: MicrosPerHour, bit: 1 << 4}, true
	case "day", "days", "d":
		return ivUnit{days: 1, bit: 1 << 5}, true
	case "week", "weeks", "w":
		return ivUnit{days: 7, bit: 1 << 6}, true
	case "month", "months", "mon", "mons":
		return ivUnit{months: 1, bit: 1 << 7}, true
	case "year", "years", "y", "yr", "yrs":
		return ivUnit{months: 12, bit: 1 << 8}, true
	case "decade", "decades", "dec", "decs":
		return ivUnit{months: 120, bit: 1 << 9}, true
	case "century", "centuries", "c", "cent":
		return ivUnit{months: 1200, bit: 1 << 10}, true
	case "millennium", "millennia", "millenniums", "mil", "mils":
		return ivUnit{months: 12000, bit: 1 << 11}, true
	}
	return ivUnit{}, false
}

// clockBits marks hours, minutes and seconds as set by a clock field.
const clockBits = 1<<2 | 1<<3 | 1<<4

// ivNumber is a parsed number: whole part and fraction, of one sign.
type ivNumber struct {
	whole    int64
	frac     float64
	overflow bool // whole does not fit int64
}

// ivBuilder accumulates fields in 64 bits, checking every step; the
// result is checked against the 32-bit month and day fields at the end.
type ivBuilder struct {
	months, days, micros int64
	seen                 uint16
	overflow             bool
}

func (b *ivBuilder) add(field *int64, n int64) {
	sum, ok := addInt64(*field, n)
	*field = sum
	b.overflow = b.overflow || !ok
}

func (b *ivBuilder) addUnit(u ivUnit, n ivNumber) bool {
	if b.seen&u.bit != 0 {
		return false
	}
	b.seen |= u.bit
	b.overflow = b.overflow || n.overflow
	switch {
	case u.micros != 0:
		b.add(&b.micros, b.mul(n.whole, u.micros))
		b.add(&b.micros, int64(math.Round(n.frac*float64(u.micros))))
	case u.days != 0:
		b.add(&b.days, b.mul(n.whole, u.days))
		b.addFractionalDays(n.frac * float64(u.days))
	case u.months == 1:
		b.add(&b.months, n.whole)
		b.addFractionalDays(n.frac * DaysPerMonth)
	default:
		b.add(&b.months, b.mul(n.whole, u.months))
		b.add(&b.months, int64(math.Round(n.frac*float64(u.months))))
	}
	return true
}

// addFractionalDays adds whole days and turns the rest into time.
func (b *ivBuilder) addFractionalDays(days float64) {
	whole := math.Trunc(days)
	b.add(&b.days, int64(whole))
	b.add(&b.micros, int64(math.Round((days-whole)*float64(MicrosPerDay))))
}

func (b *ivBuilder) mul(x, y int64) int64 {
	p, ok := mulInt64(x, y)
	b.overflow = b.overflow || !ok
	return p
}

// result checks that the fields fit DInterval.
func (b *ivBuilder) result(s string) (Datum, error) {
	if b.overflow || b.months != int64(int32(b.months)) || b.days != int64(int32(b.days)) {
		return nil, sqlerr.Errorf(sqlerr.IntervalFieldOverflow, "interval field value out of range: \"%s\"", s)
	}
	return DInterval{Months: int32(b.months), Days: int32(b.days), Micros: b.micros}, nil
}

func (b *ivBuilder) negate() {
	b.months, b.days = -b.months, -b.days
	if b.micros == math.MinInt64 {
		b.overflow = true
	}
	b.micros = -b.micros
}

func errIntervalSyntax(s string) error {
	return sqlerr.Errorf(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type interval: \"%s\"", s)
}

func parseInterval(s string) (Datum, error) {
	v := asciiLower(trimSpace(s))
	var b ivBuilder
	var ok bool
	if strings.HasPrefix(v, "p") {
		ok = b.readISO(v[1:])
	} else {
		ok = b.readVerbose(ivTokens(v))
	}
	if !ok {
		return nil, errIntervalSyntax(s)
	}
	return b.result(s)
}

// ivTokens splits on whitespace and between a number and a unit glued to
// it ("24h", "1.5days").
func ivTokens(v string) []string {
	var toks []string
	for _, f := range strings.Fields(v) {
		i := 0
		for i < len(f) && (isDigit(f[i]) || f[i] == '.' || f[i] == '-' || f[i] == '+' || f[i] == ':') {
			i++
		}
		if i > 0 && i < len(f) && isLetter(f[i]) {
			toks = append(toks, f[:i], f[i:])
			continue
		}
		toks = append(toks, f)
	}
	return toks
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// readVerbose reads the Postgres-style token sequence.
func (b *ivBuilder) readVerbose(toks []string) bool {
	if len(toks) > 0 && toks[0] == "@" {
		toks = toks[1:]
	}
	ago := len(toks) > 0 && toks[len(toks)-1] == "ago"
	if ago {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return false
	}
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		var ok bool
		switch {
		case strings.IndexByte(tok, ':') >= 0:
			ok = b.addClock(tok)
		case isYearMonth(tok):
			ok = b.addYearMonth(tok)
		default:
			var consumed bool
			consumed, ok = b.addNumber(tok, next)
			if consumed {
				i++
			}
		}
		if !ok {
			return false
		}
	}
	if ago {
		b.negate()
	}
	return true
}

// addNumber reads a number and the unit after it; a number before a
// clock field counts days, and a last number alone counts seconds. It
// reports whether it consumed next.
func (b *ivBuilder) addNumber(tok, next string) (consumed, ok bool) {
	n, ok := parseIvNumber(tok)
	if !ok {
		return false, false
	}
	if u, isUnit := ivUnitByName(next); isUnit {
		return true, b.addUnit(u, n)
	}
	switch {
	case next == "":
		return false, b.addUnit(ivSecond, n)
	case strings.IndexByte(next, ':') >= 0 && n.frac == 0:
		return false, b.addUnit(ivUnit{days: 1, bit: 1 << 5}, n)
	}
	return false, false
}

// parseIvNumber reads [+-]digits[.digits] (either side may be empty, not
// both).
func parseIvNumber(tok string) (ivNumber, bool) {
	if _, ok := scanDecimalSyntax(tok); !ok || strings.ContainsAny(tok, "eE") {
		return ivNumber{}, false
	}
	neg := strings.HasPrefix(tok, "-")
	body := strings.TrimLeft(tok, "+-")
	wholeStr, fracStr, _ := strings.Cut(body, ".")
	var n ivNumber
	if wholeStr != "" {
		if neg {
			wholeStr = "-" + wholeStr
		}
		w, err := strconv.ParseInt(wholeStr, 10, 64)
		n.whole, n.overflow = w, err != nil
	}
	if fracStr != "" {
		n.frac, _ = strconv.ParseFloat("0."+fracStr, 64)
		if neg {
			n.frac = -n.frac
		}
	}
	return n, true
}

// addClock reads [+-]H:MM[:SS[.frac]] with unbounded hours.
func (b *ivBuilder) addClock(tok string) bool {
	if b.seen&clockBits != 0 {
		return false
	}
	b.seen |= clockBits
	neg := strings.HasPrefix(tok, "-")
	body := strings.TrimLeft(tok, "+-")
	if len(tok)-len(body) > 1 {
		return false
	}
	body, frac, hasFrac := strings.Cut(body, ".")
	parts := strings.Split(body, ":")
	if len(parts) > 3 || (hasFrac && (len(parts) != 3 || frac == "" || !allDigits(frac))) {
		return false
	}
	for i, p := range parts {
		if p == "" || !allDigits(p) || (i > 0 && len(p) > 2) {
			return false
		}
	}
	h, err := strconv.ParseInt(parts[0], 10, 64)
	m := int64(atoiDigits(parts[1]))
	var sec int64
	if len(parts) == 3 {
		sec = int64(atoiDigits(parts[2]))
	}
	if err != nil || m > 59 || sec > 59 {
		b.overflow = true
		return true
	}
	// Signs are applied before adding so that -2562047788:00:54.775808
	// (the most negative interval time) does not overflow on the way.
	hours, rest := b.mul(h, MicrosPerHour), m*MicrosPerMinute+sec*MicrosPerSecond+fractionMicros(frac)
	if neg {
		hours, rest = -hours, -rest
	}
	us, ok := addInt64(hours, rest)
	b.overflow = b.overflow || !ok
	b.add(&b.micros, us)
	return true
}

// isYearMonth matches the SQL-standard [+-]Y-M field.
func isYearMonth(tok string) bool {
	body := strings.TrimLeft(tok, "+-")
	y, m, found := strings.Cut(body, "-")
	return found && len(tok)-len(body) <= 1 && y != "" && m != "" && allDigits(y) && allDigits(m)
}

func (b *ivBuilder) addYearMonth(tok string) bool {
	neg := strings.HasPrefix(tok, "-")
	y, m, _ := strings.Cut(strings.TrimLeft(tok, "+-"), "-")
	years, err := strconv.ParseInt(y, 10, 64)
	months, err2 := strconv.ParseInt(m, 10, 64)
	if err != nil || err2 != nil || months > 11 {
		b.overflow = true
		return true
	}
	if neg {
		years, months = -years, -months
	}
	return b.addUnit(ivUnit{months: 12, bit: 1 << 8}, ivNumber{whole: years}) &&
		b.addUnit(ivUnit{months: 1, bit: 1 << 7}, ivNumber{whole: months})
}
