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
		x, err := wallPlus(int64(w), v)
		return types.DTimestamp(x), err
	}))
	r.add("+", sig(tIntvl, tTs), tTs, binary(func(_ *Context, v types.DInterval, w types.DTimestamp) (types.DTimestamp, error) {
		x, err := wallPlus(int64(w), v)
		return types.DTimestamp(x), err
	}))
	r.add("-", sig(tTs, tIntvl), tTs, binary(func(_ *Context, w types.DTimestamp, v types.DInterval) (types.DTimestamp, error) {
		x, err := wallPlus(int64(w), negInterval(v))
		return types.DTimestamp(x), err
	}))
	r.add("+", sig(tTstz, tIntvl), tTstz, binary(func(ctx *Context, x types.DTimestamptz, v types.DInterval) (types.DTimestamptz, error) {
		return instantPlus(ctx, x, v)
	}))
	r.add("-", sig(tTstz, tIntvl), tTstz, binary(func(ctx *Context, x types.DTimestamptz, v types.DInterval) (types.DTimestamptz, error) {
		return instantPlus(ctx, x, negInterval(v))
	}))
	r.add("+", sig(tDate, tIntvl), tTs, binary(func(_ *Context, d types.DDate, v types.DInterval) (types.DTimestamp, error) {
		return datePlus(d, v)
	}))
	r.add("-", sig(tDate, tIntvl), tTs, binary(func(_ *Context, d types.DDate, v types.DInterval) (types.DTimestamp, error) {
		return datePlus(d, negInterval(v))
	}))
	r.add("+", sig(tDate, types.TInt32), tDate, binary(addDays(1)))
	r.add("+", sig(types.TInt32, tDate), tDate, binary(func(ctx *Context, n int64, d types.DDate) (types.DDate, error) { return addDays(1)(ctx, d, n) }))
	r.add("-", sig(tDate, types.TInt32), tDate, binary(addDays(-1)))
	r.add("-", sig(tDate, tDate), types.TInt32, binary(func(_ *Context, a, b types.DDate) (int64, error) {
		if dateInfSign(a) != 0 || dateInfSign(b) != 0 {
			return 0, errSubtractInfinite("dates")
		}
		return int64(a) - int64(b), nil
	}))
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
		return divInterval(v, f)
	}))
	for _, name := range []string{"now", "current_timestamp", "transaction_timestamp", "statement_timestamp"} {
		r.add(name, nil, tTstz, func([]Expr, types.Type) (Expr, error) { return nowExpr{}, nil })
	}
	r.add("to_timestamp", sig(tF8), tTstz, unary(toTimestamp))
	registerExtract(r)
	registerDateBin(r)
	registerToChar(r)
	registerDatetimeMore(r)
}

// wallPlus is timestamp + interval; an infinite timestamp stays as it is.
// An interval of only a time part adds its micros: event-time windows
// and watermarks add one to every row (window_end, date_time - 4 s), and
// the calendar arithmetic through time.Time was 6 % of Nexmark q7.
func wallPlus(w int64, v types.DInterval) (int64, error) {
	if infSign(w) != 0 {
		return w, nil
	}
	if v.Months == 0 && v.Days == 0 && w >= types.MinTimestampMicros && w < types.EndTimestampMicros {
		return addMicros(w, v.Micros)
	}
	x, err := addInterval(wallTime(w), v)
	if err != nil {
		return 0, err
	}
	return x, nil
}

// instantPlus is timestamptz + interval, months and days counted on the
// session zone's wall clock.
func instantPlus(ctx *Context, x types.DTimestamptz, v types.DInterval) (types.DTimestamptz, error) {
	if infSign(int64(x)) != 0 {
		return x, nil
	}
	// Months and days move the wall clock in the session zone, which is
	// then read back as an instant the way a typed-in wall clock is (a
	// skipped hour resolved as Postgres does); the time part moves the
	// instant itself.
	loc := ctx.loc()
	from, err := wallFromTz(x, loc)
	if err != nil {
		return 0, err
	}
	wall, err := addInterval(wallTime(from), types.DInterval{Months: v.Months, Days: v.Days})
	if err != nil {
		return 0, err
	}
	at, err := tzFromWall(wall, loc)
	if err != nil {
		return 0, err
	}
	t, err := wallPlus(int64(at), types.DInterval{Micros: v.Micros})
	return types.DTimestamptz(t), err
}

// datePlus is date + interval, a timestamp.
func datePlus(d types.DDate, v types.DInterval) (types.DTimestamp, error) {
	w, err := dateToTimestamp(d)
	if err != nil {
		return 0, err
	}
	x, err := wallPlus(w, v)
	return types.DTimestamp(x), err
}

func negInterval(v types.DInterval) types.DInterval {
	return types.DInterval{Months: -v.Months, Days: -v.Days, Micros: -v.Micros}
}

// addInterval adds months (clamping the day to the month's end, so Jan 31
// + 1 month is Feb 28/29), then days on the wall clock of t's zone, then
// the time part, as Postgres does. It returns timestamp micros (from
// 2000, types.DTimestamp).
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
	if t.Year() > 294276 || t.Year() < -4714 {
		return 0, errTimestampRange()
	}
	return addMicros(int64(types.TimestampFromTime(t)), v.Micros)
}

// addMicros is timestamp micros x plus us, an error past the timestamps'
// range (or int64's).
func addMicros(x, us int64) (int64, error) {
	r := x + us
	if (x >= 0) == (us >= 0) && (r >= 0) != (x >= 0) || r < types.MinTimestampMicros || r >= types.EndTimestampMicros {
		return 0, errTimestampRange()
	}
	return r, nil
}

func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func addDays(sign int64) func(*Context, types.DDate, int64) (types.DDate, error) {
	return func(_ *Context, d types.DDate, n int64) (types.DDate, error) {
		if dateInfSign(d) != 0 {
			return d, nil
		}
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
	if infSign(a) != 0 || infSign(b) != 0 {
		return types.DInterval{}, errSubtractInfinite("timestamps")
	}
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

// scaleInterval is Postgres's interval_mul (and interval_div, as 1/f):
// each field is multiplied; the fraction of the months spills into days
// (30 a month) and the fraction of the days into the time, each spill
// rounded to microseconds of a day (TSROUND) as Postgres does, so that
// '1 month' / 7 is 4 days 06:51:25.6896 there and here.
func scaleInterval(v types.DInterval, f float64) (types.DInterval, error) {
	return scaleIntervalBy(v, func(x float64) float64 { return x * f })
}

// divInterval is interval / f; it divides rather than multiplying by 1/f
// so that the last bit matches Postgres's interval_div.
func divInterval(v types.DInterval, f float64) (types.DInterval, error) {
	return scaleIntervalBy(v, func(x float64) float64 { return x / f })
}

func scaleIntervalBy(v types.DInterval, scale func(float64) float64) (types.DInterval, error) {
	m := scale(float64(v.Months))
	d := scale(float64(v.Days))
	if math.IsNaN(m) || math.IsNaN(d) || math.Abs(m) > math.MaxInt32 || math.Abs(d) > math.MaxInt32 {
		return types.DInterval{}, errIntervalRange()
	}
	months, days := int64(m), int64(d) // truncation toward zero, as C's cast
	monthRemDays := tsRound((m - float64(months)) * types.DaysPerMonth)
	secRem := tsRound((d - float64(days) + monthRemDays - math.Trunc(monthRemDays)) * 86400)
	if math.Abs(secRem) >= 86400 {
		days += int64(secRem / 86400)
		secRem -= math.Trunc(secRem/86400) * 86400
	}
	days += int64(monthRemDays)
	us := math.RoundToEven(scale(float64(v.Micros)) + secRem*1e6)
	if math.IsNaN(us) || us < math.MinInt64 || us >= math.MaxInt64 || days != int64(int32(days)) {
		return types.DInterval{}, errIntervalRange()
	}
	return types.DInterval{Months: int32(months), Days: int32(days), Micros: int64(us)}, nil
}

// tsRound rounds to six decimal places (Postgres's TSROUND).
func tsRound(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }

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

// toTimestamp is to_timestamp(Unix seconds).
func toTimestamp(_ *Context, secs float64) (types.DTimestamptz, error) {
	us := math.RoundToEven((secs - types.TimestampEpochSeconds) * 1e6) // as Postgres: epoch first, then rint
	if math.IsNaN(us) || us < float64(types.MinTimestampMicros) || us >= float64(types.EndTimestampMicros) {
		return 0, errTimestampRange()
	}
	return types.DTimestamptz(us), nil
}
