package expr

import (
	"math"
	"time"

	"github.com/sluice-db/sluice/internal/types"
)

var (
	tDate  = types.TDate
	tTs    = types.TTimestamp
	tTstz  = types.TTimestamptz
	tIntvl = types.TInterval
	tF8    = types.TFloat64
)

func registerDatetime(r registry) {
	r.add("+", sig(tTs, tIntvl), tTs, binary(func(_ *Context, w types.DTimestamp, v types.DInterval) (types.DTimestamp, error) {
		x, err := addInterval(wallTime(int64(w)), v)
		return types.DTimestamp(wallOrZero(x, err)), err
	}))
	r.add("+", sig(tIntvl, tTs), tTs, binary(func(_ *Context, v types.DInterval, w types.DTimestamp) (types.DTimestamp, error) {
		x, err := addInterval(wallTime(int64(w)), v)
		return types.DTimestamp(wallOrZero(x, err)), err
	}))
	r.add("-", sig(tTs, tIntvl), tTs, binary(func(_ *Context, w types.DTimestamp, v types.DInterval) (types.DTimestamp, error) {
		x, err := addInterval(wallTime(int64(w)), negInterval(v))
		return types.DTimestamp(wallOrZero(x, err)), err
	}))
	r.add("+", sig(tTstz, tIntvl), tTstz, binary(func(ctx *Context, x types.DTimestamptz, v types.DInterval) (types.DTimestamptz, error) {
		t, err := addInterval(time.UnixMicro(int64(x)).In(ctx.loc()), v)
		return types.DTimestamptz(t), err
	}))
	r.add("-", sig(tTstz, tIntvl), tTstz, binary(func(ctx *Context, x types.DTimestamptz, v types.DInterval) (types.DTimestamptz, error) {
		t, err := addInterval(time.UnixMicro(int64(x)).In(ctx.loc()), negInterval(v))
		return types.DTimestamptz(t), err
	}))
	r.add("+", sig(tDate, tIntvl), tTs, binary(func(_ *Context, d types.DDate, v types.DInterval) (types.DTimestamp, error) {
		x, err := addInterval(wallTime(dateToWall(d)), v)
		return types.DTimestamp(x), err
	}))
	r.add("-", sig(tDate, tIntvl), tTs, binary(func(_ *Context, d types.DDate, v types.DInterval) (types.DTimestamp, error) {
		x, err := addInterval(wallTime(dateToWall(d)), negInterval(v))
		return types.DTimestamp(x), err
	}))
	r.add("+", sig(tDate, types.TInt32), tDate, binary(addDays(1)))
	r.add("+", sig(types.TInt32, tDate), tDate, binary(func(ctx *Context, n int64, d types.DDate) (types.DDate, error) { return addDays(1)(ctx, d, n) }))
	r.add("-", sig(tDate, types.TInt32), tDate, binary(addDays(-1)))
	r.add("-", sig(tDate, tDate), types.TInt32, binary(func(_ *Context, a, b types.DDate) (int64, error) { return int64(a) - int64(b), nil }))
	r.add("-", sig(tTs, tTs), tIntvl, binary(func(_ *Context, a, b types.DTimestamp) (types.DInterval, error) { return subMicros(int64(a), int64(b)) }))
	r.add("-", sig(tTstz, tTstz), tIntvl, binary(func(_ *Context, a, b types.DTimestamptz) (types.DInterval, error) {
		return subMicros(int64(a), int64(b))
	}))
	r.add("+", sig(tIntvl, tIntvl), tIntvl, binary(func(_ *Context, a, b types.DInterval) (types.DInterval, error) { return addIntervals(a, b) }))
	r.add("-", sig(tIntvl, tIntvl), tIntvl, binary(func(_ *Context, a, b types.DInterval) (types.DInterval, error) {
		return addIntervals(a, negInterval(b))
	}))
	r.add("-", sig(tIntvl), tIntvl, unary(func(_ *Context, a types.DInterval) (types.DInterval, error) {
		if a.Months == math.MinInt32 || a.Days == math.MinInt32 || a.Micros == math.MinInt64 {
			return types.DInterval{}, errIntervalRange()
		}
		return negInterval(a), nil
	}))
	r.add("*", sig(tIntvl, tF8), tIntvl, binary(func(_ *Context, v types.DInterval, f float64) (types.DInterval, error) { return scaleInterval(v, f) }))
	r.add("*", sig(tF8, tIntvl), tIntvl, binary(func(_ *Context, f float64, v types.DInterval) (types.DInterval, error) { return scaleInterval(v, f) }))
	r.add("/", sig(tIntvl, tF8), tIntvl, binary(func(_ *Context, v types.DInterval, f float64) (types.DInterval, error) {
		if f == 0 {
			return types.DInterval{}, errDivByZero()
		}
		return scaleInterval(v, 1/f)
	}))
	for _, name := range []string{"now", "current_timestamp", "transaction_timestamp", "statement_timestamp"} {
		r.add(name, nil, tTstz, func([]Expr, types.Type) (Expr, error) { return nowExpr{}, nil })
	}
	r.add("to_timestamp", sig(tF8), tTstz, unary(toTimestamp))
	registerExtract(r)
}

func wallOrZero(x int64, err error) int64 {
	if err != nil {
		return 0
	}
	return x
}

func negInterval(v types.DInterval) types.DInterval {
	return types.DInterval{Months: -v.Months, Days: -v.Days, Micros: -v.Micros}
}

// Earliest timestamp Postgres accepts (4714-11-24 BC), as Unix micros.
const minTimestampMicros = -210866803200000000

// addInterval adds months (clamping the day to the month's end, so Jan 31
// + 1 month is Feb 28/29), then days on the wall clock of t's zone, then
// the time part, as Postgres does. It returns Unix micros.
func addInterval(t time.Time, v types.DInterval) (int64, error) {
	if v.Months != 0 {
		y, m, d := t.Date()
		total := int64(m) - 1 + int64(v.Months)
		ny := int64(y) + floorDiv(total, 12)
		nm := time.Month(total - floorDiv(total, 12)*12 + 1)
		if dim := daysIn(nm, int(ny)); d > dim {
			d = dim
		}
		t = time.Date(int(ny), nm, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	}
	if v.Days != 0 {
		t = t.AddDate(0, 0, int(v.Days))
	}
	if t.Year() > 294000 || t.Year() < -4714 {
		return 0, errTimestampRange()
	}
	x := t.UnixMicro()
	r := x + v.Micros
	if (x >= 0) == (v.Micros >= 0) && (r >= 0) != (x >= 0) || r < minTimestampMicros {
		return 0, errTimestampRange()
	}
	return r, nil
}

func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func addDays(sign int64) func(*Context, types.DDate, int64) (types.DDate, error) {
	return func(_ *Context, d types.DDate, n int64) (types.DDate, error) {
		r := int64(d) + sign*n
		if r < math.MinInt32 || r > math.MaxInt32 {
			return 0, errDateRange()
		}
		return types.DDate(r), nil
	}
}

// subMicros is timestamp - timestamp: whole days go to the day field, the
// rest stays in the time part (Postgres's interval_justify_hours).
func subMicros(a, b int64) (types.DInterval, error) {
	d := a - b
	if (a >= 0) != (b >= 0) && (d >= 0) != (a >= 0) {
		return types.DInterval{}, errIntervalRange()
	}
	days := d / types.MicrosPerDay
	return types.DInterval{Days: int32(days), Micros: d - days*types.MicrosPerDay}, nil
}

func addIntervals(a, b types.DInterval) (types.DInterval, error) {
	m := int64(a.Months) + int64(b.Months)
	d := int64(a.Days) + int64(b.Days)
	us := a.Micros + b.Micros
	if m != int64(int32(m)) || d != int64(int32(d)) || (a.Micros >= 0) == (b.Micros >= 0) && (us >= 0) != (a.Micros >= 0) {
		return types.DInterval{}, errIntervalRange()
	}
	return types.DInterval{Months: int32(m), Days: int32(d), Micros: us}, nil
}

// scaleInterval multiplies each field by f, spilling fractions of a month
// into days (30 per month) and fractions of a day into microseconds, as
// Postgres's interval_mul does.
func scaleInterval(v types.DInterval, f float64) (types.DInterval, error) {
	m := float64(v.Months) * f
	months := math.Trunc(m)
	d := float64(v.Days)*f + (m-months)*types.DaysPerMonth
	days := math.Trunc(d)
	us := math.Round(float64(v.Micros)*f + (d-days)*float64(types.MicrosPerDay))
	if math.IsNaN(us) || math.IsNaN(m) || math.Abs(months) > math.MaxInt32 || math.Abs(days) > math.MaxInt32 || math.Abs(us) >= math.MaxInt64 {
		return types.DInterval{}, errIntervalRange()
	}
	return types.DInterval{Months: int32(months), Days: int32(days), Micros: int64(us)}, nil
}

// nowExpr is now(): the statement's (or barrier's) fixed timestamp.
type nowExpr struct{}

func (nowExpr) Type() types.Type { return tTstz }

func (nowExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	var now types.DTimestamptz
	if ctx != nil {
		now = ctx.Now
	}
	return constColumn(tTstz, now, c.Capacity())
}

func toTimestamp(_ *Context, secs float64) (types.DTimestamptz, error) {
	us := math.Round(secs * 1e6)
	if math.IsNaN(us) || us < minTimestampMicros || us >= math.MaxInt64 {
		return 0, errTimestampRange()
	}
	return types.DTimestamptz(us), nil
}
