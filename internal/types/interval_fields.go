package types

import (
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Interval fields: the SQL-standard qualifier of INTERVAL '1' MINUTE or
// INTERVAL '1:30' HOUR TO MINUTE, which Postgres keeps in the type
// modifier as a mask of field bits (its datetime.h numbering). A qualifier
// says what a bare number means (its least significant field: '1' MINUTE
// is a minute, where '1' alone is a second) and drops the fields below
// that one ('1 day 02:03:04' HOUR TO MINUTE is 1 day 02:03:00).

// The field bits, INTERVAL_MASK(MONTH) … INTERVAL_MASK(SECOND).
const (
	IntervalMonth  int32 = 1 << 1
	IntervalYear   int32 = 1 << 2
	IntervalDay    int32 = 1 << 3
	IntervalHour   int32 = 1 << 10
	IntervalMinute int32 = 1 << 11
	IntervalSecond int32 = 1 << 12
	// IntervalFullRange is no qualifier (INTERVAL(3) has it with a
	// precision).
	IntervalFullRange int32 = 0x7FFF
)

// intervalRanges are the qualifiers the grammar makes, lowest field last.
var intervalRanges = map[int32]string{
	IntervalYear:                 "year",
	IntervalMonth:                "month",
	IntervalDay:                  "day",
	IntervalHour:                 "hour",
	IntervalMinute:               "minute",
	IntervalSecond:               "second",
	IntervalYear | IntervalMonth: "year to month",
	IntervalDay | IntervalHour:   "day to hour",
	IntervalDay | IntervalHour | IntervalMinute:                  "day to minute",
	IntervalDay | IntervalHour | IntervalMinute | IntervalSecond: "day to second",
	IntervalHour | IntervalMinute:                                "hour to minute",
	IntervalHour | IntervalMinute | IntervalSecond:               "hour to second",
	IntervalMinute | IntervalSecond:                              "minute to second",
}

// NewIntervalModifier checks an interval type modifier: the fields mask
// and, when hasPrec, the seconds' precision (0-6, as Postgres clamps).
func NewIntervalModifier(fields int32, prec int32, hasPrec bool) (Modifier, error) {
	if _, ok := intervalRanges[fields]; !ok && fields != IntervalFullRange {
		return Modifier{}, sqlerr.Errorf(sqlerr.Code("22023"), "invalid INTERVAL type modifier")
	}
	m := Modifier{}
	if fields != IntervalFullRange {
		m.IntervalFields = fields
	}
	if hasPrec {
		if prec < 0 {
			return Modifier{}, sqlerr.Errorf(sqlerr.Code("22023"), "INTERVAL(%d) precision must not be negative", prec)
		}
		m.Frac, m.HasFrac = min(prec, 6), true
	}
	return m, nil
}

// lowestIntervalField is the unit of a bare number under fields.
func lowestIntervalField(fields int32) string {
	for _, f := range []struct {
		bit  int32
		unit string
	}{{IntervalSecond, "second"}, {IntervalMinute, "minute"}, {IntervalHour, "hour"}, {IntervalDay, "day"}, {IntervalMonth, "month"}, {IntervalYear, "year"}} {
		if fields&f.bit != 0 {
			return f.unit
		}
	}
	return "second"
}

// ParseIntervalFields reads s as an interval under qualifier fields (0:
// none): a bare number in the qualifier's least significant field, m:s
// under MINUTE TO SECOND as minutes and seconds, anything else as
// interval input; then drops the fields below the qualifier.
func ParseIntervalFields(s string, fields int32) (Datum, error) {
	in := s
	if fields != 0 {
		v := strings.TrimSpace(s)
		switch {
		case isBareNumber(v):
			in = v + " " + lowestIntervalField(fields)
		case trailsUnitNumber(v):
			// '2 hours 30' MINUTE: a last number after a unit is in the
			// qualifier's field too, not seconds.
			in = v + " " + lowestIntervalField(fields)
		case fields == IntervalDay|IntervalHour && isDayHour(v):
			d, h, _ := strings.Cut(v, " ")
			in = d + " days " + strings.TrimSpace(h) + " hours"
		case fields == IntervalMinute|IntervalSecond && strings.Count(v, ":") == 1 && !strings.ContainsAny(v, " \t"):
			sign, rest := "", v
			if strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+") {
				sign, rest = v[:1], v[1:]
			}
			in = sign + "0:" + rest
		}
	}
	d, err := ParseDatum(in, TInterval)
	if err != nil {
		if in != s {
			if _, err2 := ParseDatum(s, TInterval); err2 != nil {
				return nil, err2 // a syntax error, about the text as written
			}
		}
		return nil, err // the qualified reading's own error (out of range)
	}
	return truncateInterval(d.(DInterval), fields), nil
}

// trailsUnitNumber: the last of several words is a bare number and the
// one before it a unit ("2 hours 30").
func trailsUnitNumber(v string) bool {
	f := strings.Fields(v)
	if len(f) < 3 || !isBareNumber(f[len(f)-1]) {
		return false
	}
	_, unit := ivUnitByName(strings.ToLower(f[len(f)-2]))
	return unit
}

// isDayHour: two bare numbers, days and hours (DAY TO HOUR's '1 2').
func isDayHour(v string) bool {
	d, h, ok := strings.Cut(v, " ")
	return ok && isBareNumber(d) && isBareNumber(strings.TrimSpace(h))
}

// isBareNumber: an optional sign, digits and at most one '.', nothing else.
func isBareNumber(v string) bool {
	if v != "" && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	digits, dots := 0, 0
	for i := range len(v) {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// truncateInterval drops the fields below fields' least significant one,
// as Postgres's AdjustIntervalForTypmod (integer division: toward zero).
func truncateInterval(iv DInterval, fields int32) DInterval {
	switch lowestIntervalField(fields) {
	case "year":
		iv.Months = iv.Months / 12 * 12
		iv.Days, iv.Micros = 0, 0
	case "month":
		iv.Days, iv.Micros = 0, 0
	case "day":
		iv.Micros = 0
	case "hour":
		iv.Micros = iv.Micros / MicrosPerHour * MicrosPerHour
	case "minute":
		iv.Micros = iv.Micros / MicrosPerMinute * MicrosPerMinute
	}
	return iv
}

// roundIntervalFrac rounds an interval's microseconds to frac digits,
// half away from zero.
func roundIntervalFrac(iv DInterval, frac int32) DInterval {
	if t, ok := roundFrac(DTime(iv.Micros), frac).(DTime); ok {
		iv.Micros = int64(t)
	}
	return iv
}

// intervalTypeString prints interval with its qualifier and precision, as
// format_type does: "interval hour to minute", "interval second(3)",
// "interval(2)".
func intervalTypeString(m Modifier) string {
	s := "interval"
	if r, ok := intervalRanges[m.IntervalFields]; ok {
		s += " " + r
	}
	if m.HasFrac {
		if m.IntervalFields != 0 {
			return fmt.Sprintf("%s(%d)", s, m.Frac)
		}
		return fmt.Sprintf("interval(%d)", m.Frac)
	}
	return s
}
