package expr

import (
	"time"

	"github.com/sluice-db/sluice/internal/types"
)

// Timestamps are microseconds since 1970-01-01. A timestamp without time
// zone is a wall clock; its micros are read as if in UTC. Conversions
// between the two use the session time zone (Context.Location).

func wallTime(w int64) time.Time { return time.UnixMicro(w).UTC() }

// wallMicros returns t's wall clock, whatever its zone, as timestamp micros.
func wallMicros(t time.Time) int64 {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).UnixMicro()
}

// tzFromWall interprets wall clock micros in loc.
func tzFromWall(w int64, loc *time.Location) types.DTimestamptz {
	t := wallTime(w)
	return types.DTimestamptz(time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UnixMicro())
}

// wallFromTz returns the wall clock of instant x in loc.
func wallFromTz(x types.DTimestamptz, loc *time.Location) int64 {
	return wallMicros(time.UnixMicro(int64(x)).In(loc))
}

func floorDivMod(a, b int64) (q, r int64) {
	q = floorDiv(a, b)
	return q, a - q*b
}

func dateToWall(d types.DDate) int64 { return int64(d) * types.MicrosPerDay }

func wallToDate(w int64) types.DDate {
	q, _ := floorDivMod(w, types.MicrosPerDay)
	return types.DDate(q)
}

func castDatetime(e Expr, to types.Type) (Expr, error) {
	from := e.Type()
	switch {
	case from.ID == types.Date && to.ID == types.Timestamp:
		return &unaryExpr[types.DDate, types.DTimestamp]{arg: e, typ: to, fn: func(_ *Context, d types.DDate) (types.DTimestamp, error) {
			return types.DTimestamp(dateToWall(d)), nil
		}}, nil
	case from.ID == types.Date && to.ID == types.Timestamptz:
		return &unaryExpr[types.DDate, types.DTimestamptz]{arg: e, typ: to, fn: func(ctx *Context, d types.DDate) (types.DTimestamptz, error) {
			return tzFromWall(dateToWall(d), ctx.loc()), nil
		}}, nil
	case from.ID == types.Timestamp && to.ID == types.Date:
		return &unaryExpr[types.DTimestamp, types.DDate]{arg: e, typ: to, fn: func(_ *Context, w types.DTimestamp) (types.DDate, error) {
			return wallToDate(int64(w)), nil
		}}, nil
	case from.ID == types.Timestamp && to.ID == types.Timestamptz:
		return &unaryExpr[types.DTimestamp, types.DTimestamptz]{arg: e, typ: to, fn: func(ctx *Context, w types.DTimestamp) (types.DTimestamptz, error) {
			return tzFromWall(int64(w), ctx.loc()), nil
		}}, nil
	case from.ID == types.Timestamp && to.ID == types.Time:
		return &unaryExpr[types.DTimestamp, types.DTime]{arg: e, typ: to, fn: func(_ *Context, w types.DTimestamp) (types.DTime, error) {
			_, r := floorDivMod(int64(w), types.MicrosPerDay)
			return types.DTime(r), nil
		}}, nil
	case from.ID == types.Timestamptz && to.ID == types.Timestamp:
		return &unaryExpr[types.DTimestamptz, types.DTimestamp]{arg: e, typ: to, fn: func(ctx *Context, x types.DTimestamptz) (types.DTimestamp, error) {
			return types.DTimestamp(wallFromTz(x, ctx.loc())), nil
		}}, nil
	case from.ID == types.Timestamptz && to.ID == types.Date:
		return &unaryExpr[types.DTimestamptz, types.DDate]{arg: e, typ: to, fn: func(ctx *Context, x types.DTimestamptz) (types.DDate, error) {
			return wallToDate(wallFromTz(x, ctx.loc())), nil
		}}, nil
	case from.ID == types.Timestamptz && to.ID == types.Time:
		return &unaryExpr[types.DTimestamptz, types.DTime]{arg: e, typ: to, fn: func(ctx *Context, x types.DTimestamptz) (types.DTime, error) {
			_, r := floorDivMod(wallFromTz(x, ctx.loc()), types.MicrosPerDay)
			return types.DTime(r), nil
		}}, nil
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
