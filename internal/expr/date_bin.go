package expr

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// date_bin(stride, source, origin) is Postgres 14's: the start of the bin
// of width stride, counted from origin, that holds source. The stride is
// a fixed length (no months: 0A000, as in Postgres) and positive. A bin
// starts at origin + k·stride for the largest k with that at or before
// source, also when origin is after source (Postgres 15 gives one stride
// less when source is exactly on a bin start before origin; fixed in 16).
// An infinite source stays infinite. It is what TUMBLE's and HOP's window
// starts are made of.

func registerDateBin(r registry) {
	r.add("date_bin", sig(tIntvl, tTs, tTs), tTs, dateBinBuild)
	r.add("date_bin", sig(tIntvl, tTstz, tTstz), tTstz, dateBinBuild)
}

func dateBinBuild(args []Expr, ret types.Type) (Expr, error) {
	if len(args) != 3 {
		return nil, fmt.Errorf("expr: internal error: date_bin of %d arguments", len(args))
	}
	if ret == types.TTimestamptz {
		return &dateBinExpr[types.DTimestamptz]{stride: args[0], src: args[1], origin: args[2], typ: ret}, nil
	}
	return &dateBinExpr[types.DTimestamp]{stride: args[0], src: args[1], origin: args[2], typ: ret}, nil
}

// dateBinExpr is date_bin over columns of timestamps (T). TUMBLE's window
// starts are one per row of every windowed source, so it reads the
// columns' values as they are: boxing each row's three arguments, as the
// general n-ary path does, was 6 % of Nexmark q7's CPU.
type dateBinExpr[T ~int64] struct {
	stride, src, origin Expr
	typ                 types.Type
}

func (e *dateBinExpr[T]) Type() types.Type { return e.typ }

func (e *dateBinExpr[T]) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	stride, err := evalAs[types.DInterval](ctx, e.stride, c)
	if err != nil {
		return nil, err
	}
	src, err := evalAs[T](ctx, e.src, c)
	if err != nil {
		return nil, err
	}
	origin, err := evalAs[T](ctx, e.origin, c)
	if err != nil {
		return nil, err
	}
	n := c.Capacity()
	out := newVec[T](e.typ, n)
	out.Nulls = unionNulls(unionNulls(stride.Nulls, src.Nulls), origin.Nulls)
	s := evalState{ctx: ctx, chunk: c}
	for i := range n {
		if out.Nulls.Get(i) {
			continue
		}
		v, err := dateBin(stride.Vals[i], int64(src.Vals[i]), int64(origin.Vals[i]))
		if err != nil {
			if err := failRow(&s, out, i, err); err != nil {
				return nil, err
			}
			continue
		}
		out.Vals[i] = T(v)
	}
	return out, nil
}

// dateBin bins source (micros) by stride from origin (micros).
func dateBin(stride types.DInterval, source, origin int64) (int64, error) {
	if infSign(source) != 0 {
		return source, nil // before the stride is looked at, as in Postgres
	}
	if stride.Months != 0 {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	}
	width, ok := fixedMicros(stride)
	if !ok || width <= 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "stride must be greater than zero")
	}
	if infSign(origin) != 0 {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "origin out of range")
	}
	diff, ok := subNoOverflow(source, origin)
	if !ok {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	delta := diff / width * width
	if diff%width < 0 {
		if delta, ok = subNoOverflow(delta, width); !ok { // floor, not truncation toward zero
			return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
	}
	out, ok := addNoOverflow(origin, delta)
	if !ok || out < types.MinTimestampMicros || out >= types.EndTimestampMicros {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
	}
	return out, nil
}

// fixedMicros is the length of an interval without months, in micros.
func fixedMicros(v types.DInterval) (int64, bool) {
	days, ok := mulNoOverflow(int64(v.Days), 86_400_000_000)
	if !ok {
		return 0, false
	}
	return addNoOverflow(days, v.Micros)
}

func addNoOverflow(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0) || b == 0
}

func subNoOverflow(a, b int64) (int64, bool) {
	if b == -1<<63 {
		return 0, false
	}
	return addNoOverflow(a, -b)
}

func mulNoOverflow(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	return p, p/b == a && !(a == -1 && b == -1<<63) && !(b == -1 && a == -1<<63)
}
