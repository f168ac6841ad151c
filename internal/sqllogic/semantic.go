package sqllogic

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
)

// Postgres type OIDs that decide which semantic readings a value may have.
const (
	oidBool        = 16
	oidChar        = 18
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidFloat4      = 700
	oidFloat8      = 701
	oidBPChar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestampTZ = 1184
	oidInterval    = 1186
	oidNumeric     = 1700
)

// semanticEqual reports whether two spellings denote the same value. Only
// readings that fit the column type are tried: a text column compares as
// text only, so '1.0' and '1' stay different strings. An unknown type
// (OID 0 or anything not listed) may be read any way, because a server may
// label a column loosely while printing correct values.
func semanticEqual(actual, expected string, oid uint32) bool {
	switch oid {
	case oidText, oidVarchar, oidBPChar, oidName, oidChar:
		return false
	case oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8:
		return numbersEqual(actual, expected)
	case oidNumeric:
		return numbersEqual(actual, expected) || quotientsEqual(actual, expected)
	case oidBool:
		return boolsEqual(actual, expected)
	case oidTimestamp, oidTimestampTZ, oidDate:
		return timestampsEqual(actual, expected)
	case oidInterval, oidTime:
		return intervalsEqual(actual, expected)
	}
	return numbersEqual(actual, expected) || boolsEqual(actual, expected) ||
		timestampsEqual(actual, expected) || intervalsEqual(actual, expected)
}

// numbersEqual compares decimal spellings exactly (1.50 = 1.5 = 15e-1), so
// rounding differences such as 0.30000000000000004 vs 0.3 still fail.
func numbersEqual(a, b string) bool {
	x, _, errA := apd.NewFromString(a)
	y, _, errB := apd.NewFromString(b)
	if errA != nil || errB != nil {
		return false
	}
	switch {
	case x.Form == apd.NaN || y.Form == apd.NaN:
		return x.Form == y.Form
	case x.Form == apd.Infinite || y.Form == apd.Infinite:
		return x.Form == y.Form && x.Negative == y.Negative
	}
	return x.Cmp(y) == 0
}

// quotientsEqual accepts a numeric quotient printed to a different number
// of digits: Postgres gives avg(bigint) 263196.666666666667 where
// RisingWave prints 263196.66666666666666666666667. The longer spelling,
// rounded half up to the shorter's fractional digits, must equal it, and
// the shorter must have at least 6 of them, so that only a repeating
// quotient cut short qualifies, never a value rounded to cents.
func quotientsEqual(a, b string) bool {
	x, _, errA := apd.NewFromString(a)
	y, _, errB := apd.NewFromString(b)
	if errA != nil || errB != nil || x.Form != apd.Finite || y.Form != apd.Finite {
		return false
	}
	if -x.Exponent > -y.Exponent {
		x, y = y, x // x is the shorter
	}
	digits := -x.Exponent
	if digits < 6 || digits == -y.Exponent {
		return false
	}
	var r apd.Decimal
	c := apd.BaseContext.WithPrecision(200)
	c.Rounding = apd.RoundHalfUp
	if _, err := c.Quantize(&r, y, x.Exponent); err != nil {
		return false
	}
	return r.Cmp(x) == 0
}

func boolsEqual(a, b string) bool {
	parse := func(s string) (bool, bool) {
		switch strings.ToLower(s) {
		case "t", "true":
			return true, true
		case "f", "false":
			return false, true
		}
		return false, false
	}
	x, okA := parse(a)
	y, okB := parse(b)
	return okA && okB && x == y
}

var timestampPattern = regexp.MustCompile(
	`^(\d{4,}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?$`)

// tsForm says which parts a timestamp spelling had. Two spellings are only
// comparable when they have the same parts: both with an offset (compared
// as instants) or neither (wall-clock times), and both with a clock or
// neither (so a date never equals a timestamp at midnight).
type tsForm struct{ zoned, clocked bool }

// parseTimestamp reads Postgres/RisingWave/ISO timestamp spellings.
func parseTimestamp(s string) (t time.Time, form tsForm, ok bool) {
	m := timestampPattern.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, form, false
	}
	form = tsForm{zoned: m[3] != "", clocked: m[2] != ""}
	clock := m[2]
	if clock == "" {
		clock = "00:00:00"
	} else if strings.Count(clock, ":") == 1 {
		clock += ":00"
	}
	t, err := time.Parse("2006-01-02 15:04:05.999999999", m[1]+" "+clock)
	if err != nil {
		return time.Time{}, form, false
	}
	if m[3] == "" {
		return t, form, true
	}
	off, ok := parseOffset(m[3])
	if !ok {
		return time.Time{}, form, false
	}
	return t.Add(-off), form, true
}

// parseOffset reads Z, +HH, +HH:MM, +HHMM, +HH:MM:SS.
func parseOffset(s string) (time.Duration, bool) {
	if s == "Z" {
		return 0, true
	}
	sign := time.Duration(1)
	if s[0] == '-' {
		sign = -1
	}
	digits := strings.ReplaceAll(s[1:], ":", "")
	var total time.Duration
	units := []time.Duration{time.Hour, time.Minute, time.Second}
	for i := 0; i < len(digits); i += 2 {
		n, err := strconv.Atoi(digits[i : i+2])
		if err != nil || i/2 >= len(units) {
			return 0, false
		}
		total += time.Duration(n) * units[i/2]
	}
	return sign * total, true
}

func timestampsEqual(a, b string) bool {
	x, fx, okA := parseTimestamp(a)
	y, fy, okB := parseTimestamp(b)
	return okA && okB && fx == fy && x.Equal(y)
}
