package expr

import (
	"time"

	"github.com/sluice-db/sluice/internal/types"
)

// Timestamps are microseconds since 2000-01-01 (types.DTimestamp). A
// timestamp without time zone is a wall clock; its micros are read as if
// in UTC. Conversions between the two use the session time zone
// (Context.Location).

func wallTime(w int64) time.Time { return types.DTimestamp(w).Time() }

// wallMicros returns t's wall clock, whatever its zone, as timestamp micros.
func wallMicros(t time.Time) int64 { return int64(types.TimestampFromTime(t)) }

// tzFromWall interprets wall clock micros in loc. A wall clock that a
// transition skips or repeats is resolved as Postgres's
// DetermineTimeZoneOffset does — a skipped one (spring forward) with the
// offset from before the transition, a repeated one (fall back) with the
// offset from after — where time.Date would do the opposite.
// The instant must lie in the timestamp range (22008 otherwise).
func tzFromWall(w int64, loc *time.Location) (types.DTimestamptz, error) {
	if loc == time.UTC {
		return types.DTimestamptz(w), nil
	}
	secs, us := floorDivMod(w, types.MicrosPerSecond)
	secs += types.TimestampEpochSeconds // Unix seconds from here on
	offAt := func(u int64) int64 {
		_, off := time.Unix(u, 0).In(loc).Zone()
		return int64(off)
	}
	// Transitions are far more than a day apart, so the offsets a day
	// either side are the ones before and after any transition near w.
	before, after := offAt(secs-86400), offAt(secs+86400)
	u := secs - before
	if before != after {
		u1, u2 := secs-before, secs-after
		ok1, ok2 := offAt(u1) == before, offAt(u2) == after
		switch {
		case ok2 && !ok1, ok1 && ok2:
			u = u2
		default: // only the first fits, or neither (a skipped wall clock)
			u = u1
		}
	}
	return inTimestampRange((u-types.TimestampEpochSeconds)*types.MicrosPerSecond + us)
}

// wallFromTz returns the wall clock of instant x in loc, which must lie
// in the timestamp range (22008 otherwise: the last hours of 294276 AD
// UTC are past it east of Greenwich).
func wallFromTz(x types.DTimestamptz, loc *time.Location) (int64, error) {
	w, err := inTimestampRange(wallMicros(x.Time().In(loc)))
	return int64(w), err
}

func inTimestampRange(us int64) (types.DTimestamptz, error) {
	if us < types.MinTimestampMicros || us >= types.EndTimestampMicros {
		return 0, errTimestampRange()
	}
	return types.DTimestamptz(us), nil
}

func floorDivMod(a, b int64) (q, r int64) {
	q = floorDiv(a, b)
	return q, a - q*b
}

// dateToWall is the timestamp of midnight at the start of d (dates count
// days from 1970, timestamps micros from 2000).
func dateToWall(d types.DDate) int64 {
	return (int64(d) - types.TimestampEpochDays) * types.MicrosPerDay
}

func wallToDate(w int64) types.DDate {
	q, _ := floorDivMod(w, types.MicrosPerDay)
	return types.DDate(q + types.TimestampEpochDays)
}

func castDatetime(e Expr, to types.Type) (Expr, error) {
	from := e.Type()
	switch {
	case from.ID == types.Date && to.ID == types.Timestamp:
		return &unaryExpr[types.DDate, types.DTimestamp]{arg: e, typ: to, fn: func(_ *Context, d types.DDate) (types.DTimestamp, error) {
			w, err := dateToTimestamp(d)
			return types.DTimestamp(w), err
		}}, nil
	case from.ID == types.Date && to.ID == types.Timestamptz:
		return &unaryExpr[types.DDate, types.DTimestamptz]{arg: e, typ: to, fn: func(ctx *Context, d types.DDate) (types.DTimestamptz, error) {
			w, err := dateToTimestamp(d)
			if err != nil || infSign(w) != 0 {
				return types.DTimestamptz(w), err
			}
			return tzFromWall(w, ctx.loc())
		}}, nil
	case from.ID == types.Timestamp && to.ID == types.Date:
		return &unaryExpr[types.DTimestamp, types.DDate]{arg: e, typ: to, fn: func(_ *Context, w types.DTimestamp) (types.DDate, error) {
			if s := infSign(int64(w)); s != 0 {
				return dateOfInf(s), nil
			}
			return wallToDate(int64(w)), nil
		}}, nil
	case from.ID == types.Timestamp && to.ID == types.Timestamptz:
		return &unaryExpr[types.DTimestamp, types.DTimestamptz]{arg: e, typ: to, fn: func(ctx *Context, w types.DTimestamp) (types.DTimestamptz, error) {
			if infSign(int64(w)) != 0 {
				return types.DTimestamptz(w), nil
			}
			return tzFromWall(int64(w), ctx.loc())
		}}, nil
	case from.ID == types.Timestamp && to.ID == types.Time:
		return timeOfInstant(e, to, func(_ *Context, x int64) int64 { return x }), nil
	case from.ID == types.Timestamptz && to.ID == types.Timestamp:
		return &unaryExpr[types.DTimestamptz, types.DTimestamp]{arg: e, typ: to, fn: func(ctx *Context, x types.DTimestamptz) (types.DTimestamp, error) {
			if infSign(int64(x)) != 0 {
				return types.DTimestamp(x), nil
			}
			w, err := wallFromTz(x, ctx.loc())
			return types.DTimestamp(w), err
		}}, nil
	case from.ID == types.Timestamptz && to.ID == types.Date:
		return &unaryExpr[types.DTimestamptz, types.DDate]{arg: e, typ: to, fn: func(ctx *Context, x types.DTimestamptz) (types.DDate, error) {
			if s := infSign(int64(x)); s != 0 {
				return dateOfInf(s), nil
			}
			w, err := wallFromTz(x, ctx.loc())
			return wallToDate(w), err
		}}, nil
	case from.ID == types.Timestamptz && to.ID == types.Time:
		return timeOfInstant(e, to, func(ctx *Context, x int64) int64 {
			// The time of day of a wall clock past the range is still that.
			return wallMicros(types.DTimestamptz(x).Time().In(ctx.loc()))
		}), nil
	case from.ID == types.Time && to.ID == types.Interval:
		return &unaryExpr[types.DTime, types.DInterval]{arg: e, typ: to, fn: func(_ *Context, t types.DTime) (types.DInterval, error) {
			return types.DInterval{Micros: int64(t)}, nil
		}}, nil
	case from.ID == types.Interval && to.ID == types.Time:
		return &unaryExpr[types.DInterval, types.DTime]{arg: e, typ: to, fn: func(_ *Context, v types.DInterval) (types.DTime, error) {
			_, r := floorDivMod(v.Micros, types.MicrosPerDay)
			return types.DTime(r), nil
		}}, nil
	}
	return nil, errBuild("no cast from %s to %s", from, to)
}

// timeOfInstant is timestamp[tz] → time: the time of day of the wall clock
// wall(x) gives, and NULL for the infinities (Postgres's timestamp_time).
func timeOfInstant(e Expr, to types.Type, wall func(*Context, int64) int64) Expr {
	return &naryExpr{args: []Expr{e}, typ: to, strict: true, fn: func(ctx *Context, a []types.Datum) (types.Datum, error) {
		var x int64
		switch v := a[0].(type) {
		case types.DTimestamp:
			x = int64(v)
		case types.DTimestamptz:
			x = int64(v)
		}
		if infSign(x) != 0 {
			return nil, nil
		}
		_, r := floorDivMod(wall(ctx, x), types.MicrosPerDay)
		return types.DTime(r), nil
	}}
}
