package expr

import (
	"time"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// The rest of Postgres's date/time operators: time ± interval, time - time,
// date + time, the justify_* functions and AT TIME ZONE (timezone()).

func registerDatetimeMore(r registry) {
	tTime := types.TTime
	r.add("+", sig(tTime, tIntvl), tTime, binary(func(_ *Context, t types.DTime, v types.DInterval) (types.DTime, error) {
		return timePlus(t, v.Micros), nil
	}))
	r.add("+", sig(tIntvl, tTime), tTime, binary(func(_ *Context, v types.DInterval, t types.DTime) (types.DTime, error) {
		return timePlus(t, v.Micros), nil
	}))
	r.add("-", sig(tTime, tIntvl), tTime, binary(func(_ *Context, t types.DTime, v types.DInterval) (types.DTime, error) {
		return timePlus(t, -v.Micros), nil
	}))
	r.add("-", sig(tTime, tTime), tIntvl, binary(func(_ *Context, a, b types.DTime) (types.DInterval, error) {
		return types.DInterval{Micros: int64(a) - int64(b)}, nil
	}))
	r.add("+", sig(tDate, tTime), tTs, binary(func(_ *Context, d types.DDate, t types.DTime) (types.DTimestamp, error) {
		return dateAtTime(d, t)
	}))
	r.add("+", sig(tTime, tDate), tTs, binary(func(_ *Context, t types.DTime, d types.DDate) (types.DTimestamp, error) {
		return dateAtTime(d, t)
	}))
	r.add("justify_hours", sig(tIntvl), tIntvl, unary(func(_ *Context, v types.DInterval) (types.DInterval, error) { return justifyHours(v) }))
	r.add("justify_days", sig(tIntvl), tIntvl, unary(func(_ *Context, v types.DInterval) (types.DInterval, error) { return justifyDays(v) }))
	r.add("justify_interval", sig(tIntvl), tIntvl, unary(func(_ *Context, v types.DInterval) (types.DInterval, error) { return justifyInterval(v) }))
	r.add("timezone", sig(tv, tTs), tTstz, timezoneBuild(tTstz))
	r.add("timezone", sig(tv, tTstz), tTs, timezoneBuild(tTs))
}

// timePlus wraps around midnight, as Postgres's time_pl_interval does
// (only the time part of the interval counts).
func timePlus(t types.DTime, us int64) types.DTime {
	r := (int64(t) + us%types.MicrosPerDay) % types.MicrosPerDay
	if r < 0 {
		r += types.MicrosPerDay
	}
	return types.DTime(r)
}

func dateAtTime(d types.DDate, t types.DTime) (types.DTimestamp, error) {
	w, err := dateToTimestamp(d)
	if err != nil || infSign(w) != 0 {
		return types.DTimestamp(w), err
	}
	r := w + int64(t)
	if int64(wallToDate(r)) >= maxTimestampDate {
		return 0, errTimestampRange()
	}
	return types.DTimestamp(r), nil
}

func addDaysChecked(a int32, b int64) (int32, error) {
	r := int64(a) + b
	if r != int64(int32(r)) {
		return 0, errIntervalRange()
	}
	return int32(r), nil
}

// carry moves whole units of lo into hi, as Postgres's justify functions
// do (TMODULO): lo keeps the remainder, with lo's sign.
func carry(hi int32, lo, unit int64) (int32, int64, error) {
	whole := lo / unit
	hi, err := addDaysChecked(hi, whole)
	return hi, lo - whole*unit, err
}

// agree borrows one unit between hi and lo when their signs differ, so
// both end up with hi's sign (loNeg/loPos say which way lo points).
func agree(hi int32, lo, unit int64, loNeg, loPos bool) (int32, int64) {
	switch {
	case hi > 0 && loNeg:
		return hi - 1, lo + unit
	case hi < 0 && loPos:
		return hi + 1, lo - unit
	}
	return hi, lo
}

// justifyHours moves whole days out of the time (interval_justify_hours).
func justifyHours(v types.DInterval) (types.DInterval, error) {
	var err error
	if v.Days, v.Micros, err = carry(v.Days, v.Micros, types.MicrosPerDay); err != nil {
		return v, err
	}
	v.Days, v.Micros = agree(v.Days, v.Micros, types.MicrosPerDay, v.Micros < 0, v.Micros > 0)
	return v, nil
}

// justifyDays moves whole 30-day months out of the days
// (interval_justify_days).
func justifyDays(v types.DInterval) (types.DInterval, error) {
	months, days, err := carry(v.Months, int64(v.Days), types.DaysPerMonth)
	if err != nil {
		return v, err
	}
	v.Months, days = agree(months, days, types.DaysPerMonth, days < 0, days > 0)
	v.Days = int32(days)
	return v, nil
}

// justifyInterval is both, with signs made to agree across all three
// fields (interval_justify_interval).
func justifyInterval(v types.DInterval) (types.DInterval, error) {
	var err error
	days := int64(v.Days)
	if (v.Days > 0 && v.Micros > 0) || (v.Days < 0 && v.Micros < 0) {
		if v.Months, days, err = carry(v.Months, days, types.DaysPerMonth); err != nil {
			return v, err
		}
	}
	d32 := int32(days)
	if d32, v.Micros, err = carry(d32, v.Micros, types.MicrosPerDay); err != nil {
		return v, err
	}
	if v.Months, days, err = carry(v.Months, int64(d32), types.DaysPerMonth); err != nil {
		return v, err
	}
	v.Months, days = agree(v.Months, days, types.DaysPerMonth,
		days < 0 || (days == 0 && v.Micros < 0), days > 0 || (days == 0 && v.Micros > 0))
	v.Days, v.Micros = agree(int32(days), v.Micros, types.MicrosPerDay, v.Micros < 0, v.Micros > 0)
	return v, nil
}

// loadZone resolves a time zone name for AT TIME ZONE. Only IANA names
// (and UTC) are understood; Postgres's POSIX offsets ('+05', inverted
// sign) and abbreviations are 22023 rather than a silently wrong zone.
func loadZone(name string) (*time.Location, error) {
	if name != "" && name != "Local" {
		if loc, err := time.LoadLocation(name); err == nil {
			return loc, nil
		}
	}
	return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "time zone %q not recognized", name)
}

// timezoneBuild is timezone(zone, x), the function behind x AT TIME ZONE
// zone: a timestamp is read as a wall clock in zone (giving timestamptz),
// a timestamptz is shown as the wall clock in zone (giving timestamp). A
// constant zone is loaded once.
func timezoneBuild(ret types.Type) buildFn {
	return func(args []Expr, _ types.Type) (Expr, error) {
		var fixed *time.Location
		if lit, ok := args[0].(*literalExpr); ok && lit.val != nil {
			var err error
			if fixed, err = loadZone(lit.val.(string)); err != nil {
				return nil, err
			}
		}
		return &naryExpr{args: args, typ: ret, strict: true, fn: func(_ *Context, a []types.Datum) (types.Datum, error) {
			loc := fixed
			if loc == nil {
				var err error
				if loc, err = loadZone(a[0].(string)); err != nil {
					return nil, err
				}
			}
			switch x := a[1].(type) {
			case types.DTimestamp:
				if infSign(int64(x)) != 0 {
					return types.DTimestamptz(x), nil
				}
				return tzFromWall(int64(x), loc)
			case types.DTimestamptz:
				if infSign(int64(x)) != 0 {
					return types.DTimestamp(x), nil
				}
				w, err := wallFromTz(x, loc)
				return types.DTimestamp(w), err
			}
			return nil, errBuild("timezone of %T", a[1])
		}}, nil
	}
}
