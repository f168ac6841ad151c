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
	return &naryExpr{args: args, typ: ret, strict: true, fn: func(_ *Context, a []types.Datum) (types.Datum, error) {
		stride, ok := a[0].(types.DInterval)
		if !ok {
			return nil, fmt.Errorf("expr: internal error: date_bin stride %T", a[0])
		}
		switch src := a[1].(type) {
		case types.DTimestamp:
			v, err := dateBin(stride, int64(src), int64(a[2].(types.DTimestamp)))
			return types.DTimestamp(v), err
		case types.DTimestamptz:
			v, err := dateBin(stride, int64(src), int64(a[2].(types.DTimestamptz)))
			return types.DTimestamptz(v), err
		}
		return nil, fmt.Errorf("expr: internal error: date_bin of %T", a[1])
	}}, nil
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
