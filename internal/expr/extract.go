package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// extract(field, x) returns numeric (Postgres 14+); date_part(field, x)
// returns double precision. date_trunc(field, x) truncates. The field must
// be a constant (a literal), which lets Build reject an unknown unit; a
// date argument is read as a timestamp at midnight.

func registerExtract(r registry) {
	for _, t := range []types.Type{tTs, tTstz, tIntvl} {
		r.add("extract", sig(tv, t), types.TDecimal, extractBuild(t, false))
		r.add("date_part", sig(tv, t), tF8, extractBuild(t, true))
	}
	r.add("extract", sig(tv, tDate), types.TDecimal, extractDateBuild)
	r.add("date_trunc", sig(tv, tTs), tTs, truncBuild(tTs))
	r.add("date_trunc", sig(tv, tTstz), tTstz, truncBuild(tTstz))
}

// constField reads the field argument.
func constField(e Expr) (string, error) {
	lit, ok := e.(*literalExpr)
	if !ok {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "the field of extract/date_part/date_trunc must be a constant")
	}
	s, ok := lit.val.(string)
	if !ok {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "field must not be NULL")
	}
	return strings.ToLower(strings.TrimSpace(s)), nil
}

// fieldValue is one extracted field as v × 10^-scale.
type fieldValue struct {
	v     int64
	scale int32
	// plusSecs is added to v·10^-scale: the epoch field is a timestamp's
	// micros from 2000 plus 2000's Unix seconds, which as one int64 of
	// micros would overflow for the last 30 000 years of the range.
	plusSecs int64
}

var timestampFields = map[string]bool{
	"year": true, "quarter": true, "month": true, "week": true, "day": true, "hour": true,
	"minute": true, "second": true, "millisecond": true, "microsecond": true,
	"epoch": true, "dow": true, "isodow": true, "doy": true, "decade": true, "century": true,
	"millennium": true, "isoyear": true,
}

var intervalFields = map[string]bool{
	"year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true,
	"millisecond": true, "microsecond": true, "epoch": true,
}

func normalizeField(f string) string {
	switch f {
	case "years":
		return "year"
	case "months", "mon":
		return "month"
	case "days":
		return "day"
	case "hours":
		return "hour"
	case "minutes", "min":
		return "minute"
	case "seconds", "sec":
		return "second"
	case "milliseconds", "ms":
		return "millisecond"
	case "microseconds", "us":
		return "microsecond"
	}
	return f
}

func extractBuild(t types.Type, double bool) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		field, err := constField(args[0])
		if err != nil {
			return nil, err
		}
		field = normalizeField(field)
		known := timestampFields
		if t.ID == types.Interval {
			known = intervalFields
		}
		if !known[field] {
			return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "unit %q not supported for type %s", field, t)
		}
		out := func(fv fieldValue) (types.Datum, error) {
			d := apd.New(fv.v, -fv.scale)
			if fv.plusSecs != 0 {
				if _, err := apd.BaseContext.WithPrecision(40).Add(d, d, apd.New(fv.plusSecs, 0)); err != nil {
					return nil, err
				}
			}
			if double {
				f, _ := d.Float64()
				return f, nil
			}
			return d, nil
		}
		return &naryExpr{args: args[1:], typ: ret, strict: true, fn: func(ctx *Context, a []types.Datum) (types.Datum, error) {
			switch x := a[0].(type) {
			case types.DTimestamp:
				if s := infSign(int64(x)); s != 0 {
					return extractInfinite(field, s, double), nil
				}
				return out(extractTime(field, wallTime(int64(x)), int64(x)))
			case types.DTimestamptz:
				if s := infSign(int64(x)); s != 0 {
					return extractInfinite(field, s, double), nil
				}
				return out(extractTime(field, x.Time().In(ctx.loc()), int64(x)))
			case types.DInterval:
				return out(extractInterval(field, x))
			}
			return nil, fmt.Errorf("expr: internal error: extract from %T", a[0])
		}}, nil
	}
}

// extractTime reads field from wall clock t; micros is the timestamp's
// value (from 2000), whose Unix time is the epoch field.
func extractTime(field string, t time.Time, micros int64) fieldValue {
	secMicros := int64(t.Second())*1e6 + int64(t.Nanosecond()/1000)
	switch field {
	case "year": // there is no year 0: 1 BC is -1
		if y := int64(t.Year()); y <= 0 {
			return fieldValue{v: y - 1}
		}
		return fieldValue{v: int64(t.Year())}
	case "isoyear":
		y, _ := t.ISOWeek()
		if y <= 0 {
			return fieldValue{v: int64(y) - 1}
		}
		return fieldValue{v: int64(y)}
	case "millennium":
		return fieldValue{v: yearsPer(int64(t.Year()), 1000)}
	case "quarter":
		return fieldValue{v: int64(t.Month()-1)/3 + 1}
	case "month":
		return fieldValue{v: int64(t.Month())}
	case "week":
		_, w := t.ISOWeek()
		return fieldValue{v: int64(w)}
	case "day":
		return fieldValue{v: int64(t.Day())}
	case "hour":
		return fieldValue{v: int64(t.Hour())}
	case "minute":
		return fieldValue{v: int64(t.Minute())}
	case "second":
		return fieldValue{v: secMicros, scale: 6}
	case "millisecond":
		return fieldValue{v: secMicros, scale: 3}
	case "microsecond":
		return fieldValue{v: secMicros}
	case "epoch":
		return fieldValue{v: micros, scale: 6, plusSecs: types.TimestampEpochSeconds}
	case "dow":
		return fieldValue{v: int64(t.Weekday())}
	case "isodow":
		if t.Weekday() == time.Sunday {
			return fieldValue{v: 7}
		}
		return fieldValue{v: int64(t.Weekday())}
	case "doy":
		return fieldValue{v: int64(t.YearDay())}
	case "decade":
		return fieldValue{v: floorDiv(int64(t.Year()), 10)}
	default: // century
		return fieldValue{v: yearsPer(int64(t.Year()), 100)}
	}
}

// yearsPer numbers the century (n 100) or millennium (n 1000) of
// astronomical year y as Postgres does: the 21st century starts in 2001,
// and the 1st century BC is -1.
func yearsPer(y, n int64) int64 {
	if y > 0 {
		return (y + n - 1) / n
	}
	return -((n - 1 - (y - 1)) / n)
}

func extractInterval(field string, v types.DInterval) fieldValue {
	switch field {
	case "year":
		return fieldValue{v: int64(v.Months / 12)}
	case "month":
		return fieldValue{v: int64(v.Months % 12)}
	case "day":
		return fieldValue{v: int64(v.Days)}
	case "hour":
		return fieldValue{v: v.Micros / types.MicrosPerHour}
	case "minute":
		return fieldValue{v: v.Micros % types.MicrosPerHour / types.MicrosPerMinute}
	case "second":
		return fieldValue{v: v.Micros % types.MicrosPerMinute, scale: 6}
	case "millisecond":
		return fieldValue{v: v.Micros % types.MicrosPerMinute, scale: 3}
	case "microsecond":
		return fieldValue{v: v.Micros % types.MicrosPerMinute}
	default: // epoch: a year is 365.25 days, a month 30 (Postgres's rule)
		m := int64(v.Months)
		secs := (1461*(m/12) + 120*(m%12) + 4*int64(v.Days)) * 86400 / 4
		return fieldValue{v: secs*types.MicrosPerSecond + v.Micros, scale: 6}
	}
}

func truncBuild(t types.Type) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		field, err := constField(args[0])
		if err != nil {
			return nil, err
		}
		field = normalizeField(field)
		if _, err := truncTime(field, time.Unix(0, 0).UTC()); err != nil {
			return nil, err
		}
		return &naryExpr{args: args[1:], typ: ret, strict: true, fn: func(ctx *Context, a []types.Datum) (types.Datum, error) {
			if x, ok := a[0].(types.DTimestamp); ok && infSign(int64(x)) != 0 {
				return x, nil
			}
			if x, ok := a[0].(types.DTimestamptz); ok && infSign(int64(x)) != 0 {
				return x, nil
			}
			switch x := a[0].(type) {
			case types.DTimestamp:
				r, err := truncTime(field, wallTime(int64(x)))
				return types.DTimestamp(wallMicros(r)), err
			case types.DTimestamptz:
				r, err := truncTime(field, x.Time().In(ctx.loc()))
				return types.TimestamptzFromTime(r), err
			}
			return nil, fmt.Errorf("expr: internal error: date_trunc of %T", a[0])
		}}, nil
	}
}

// truncTime truncates wall clock t (in its own zone) to the unit.
func truncTime(field string, t time.Time) (time.Time, error) {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	ns := t.Nanosecond()
	loc := t.Location()
	switch field {
	case "microsecond":
		return time.Date(y, mo, d, h, mi, s, ns/1000*1000, loc), nil
	case "millisecond":
		return time.Date(y, mo, d, h, mi, s, ns/1e6*1e6, loc), nil
	case "second":
		return time.Date(y, mo, d, h, mi, s, 0, loc), nil
	case "minute":
		return time.Date(y, mo, d, h, mi, 0, 0, loc), nil
	case "hour":
		return time.Date(y, mo, d, h, 0, 0, 0, loc), nil
	case "day":
		return time.Date(y, mo, d, 0, 0, 0, 0, loc), nil
	case "week": // ISO weeks start on Monday
		back := (int(t.Weekday()) + 6) % 7
		return time.Date(y, mo, d-back, 0, 0, 0, 0, loc), nil
	case "month":
		return time.Date(y, mo, 1, 0, 0, 0, 0, loc), nil
	case "quarter":
		return time.Date(y, (mo-1)/3*3+1, 1, 0, 0, 0, 0, loc), nil
	case "year":
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc), nil
	case "decade":
		return time.Date(int(floorDiv(int64(y), 10)*10), 1, 1, 0, 0, 0, 0, loc), nil
	case "century", "millennium":
		n := map[string]int64{"century": 100, "millennium": 1000}[field]
		return time.Date(int(truncYears(int64(y), n)), 1, 1, 0, 0, 0, 0, loc), nil
	}
	return t, sqlerr.Errorf(sqlerr.InvalidParameterValue, "unit %q not recognized for date_trunc", field)
}

// truncYears is the first astronomical year of the century (n 100) or
// millennium (n 1000) holding year y, as Postgres's timestamp_trunc
// computes it.
func truncYears(y, n int64) int64 {
	if y > 0 {
		return (y-1)/n*n + 1
	}
	// Postgres: -((n-1) - (year-1))/n * n + 1 on its BC-aware year.
	return -((n-1)-(y-1))/n*n + 1
}
