package expr

import (
	"math"

	"github.com/sluice-db/sluice/internal/types"
)

// intArith is + - * / % on smallint, integer or bigint. All three are
// carried as int64; the result is range-checked against the SQL width, so
// integer + integer overflows at 2^31 as in Postgres.
//
// The loops compute every slot (NULL and invisible rows included, their
// values are harmless) and collect the rows that overflowed or divided by
// zero; only those rows go through the error policy. That keeps the common
// loop free of branches on NULLs.
type intArith struct {
	op   byte
	l, r Expr
	typ  types.Type
}

func (e *intArith) Type() types.Type { return e.typ }

func (e *intArith) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	a, err := evalAs[int64](ctx, e.l, c)
	if err != nil {
		return nil, err
	}
	b, err := evalAs[int64](ctx, e.r, c)
	if err != nil {
		return nil, err
	}
	n := c.Capacity()
	out := newVec[int64](e.typ, n)
	out.Nulls = unionNulls(a.Nulls, b.Nulls)
	av, bv, ov := a.Vals[:n], b.Vals[:n], out.Vals
	lo, hi := e.typ.IntRange()
	var bad []int
	switch e.op {
	case '+':
		bad = addInts(av, bv, ov, lo, hi, e.typ.ID == types.Int64)
	case '-':
		bad = subInts(av, bv, ov, lo, hi, e.typ.ID == types.Int64)
	case '*':
		bad = mulInts(av, bv, ov, lo, hi)
	case '/':
		bad = divInts(av, bv, ov, lo, hi)
	case '%':
		bad = modInts(av, bv, ov)
	}
	s := evalState{ctx: ctx, chunk: c}
	for _, i := range bad {
		if out.Nulls.Get(i) {
			continue
		}
		rowErr := errIntRange(e.typ)
		if (e.op == '/' || e.op == '%') && bv[i] == 0 {
			rowErr = errDivByZero()
		}
		if err := failRow(&s, out, i, rowErr); err != nil {
			return nil, err
		}
	}
	zeroNulls(out)
	return out, nil
}

func addInts(a, b, out []int64, lo, hi int64, wide bool) (bad []int) {
	if wide {
		for i := range out {
			s := a[i] + b[i]
			out[i] = s
			// Signed overflow: both operands have the sign the sum lacks.
			if (a[i]^s)&(b[i]^s) < 0 {
				bad = append(bad, i)
			}
		}
		return bad
	}
	for i := range out {
		s := a[i] + b[i]
		out[i] = s
		if s < lo || s > hi {
			bad = append(bad, i)
		}
	}
	return bad
}

func subInts(a, b, out []int64, lo, hi int64, wide bool) (bad []int) {
	if wide {
		for i := range out {
			s := a[i] - b[i]
			out[i] = s
			if (a[i]^b[i])&(a[i]^s) < 0 {
				bad = append(bad, i)
			}
		}
		return bad
	}
	for i := range out {
		s := a[i] - b[i]
		out[i] = s
		if s < lo || s > hi {
			bad = append(bad, i)
		}
	}
	return bad
}

func mulInts(a, b, out []int64, lo, hi int64) (bad []int) {
	for i := range out {
		x, y := a[i], b[i]
		p := x * y
		out[i] = p
		if p < lo || p > hi || (x != 0 && (p/x != y || (x == -1 && y == math.MinInt64))) {
			bad = append(bad, i)
		}
	}
	return bad
}

func divInts(a, b, out []int64, lo, hi int64) (bad []int) {
	for i := range out {
		x, y := a[i], b[i]
		switch {
		case y == 0:
			bad = append(bad, i)
		case y == -1:
			// -MIN overflows; Go would wrap silently.
			if -x < lo || -x > hi || x == math.MinInt64 {
				bad = append(bad, i)
				continue
			}
			out[i] = -x
		default:
			out[i] = x / y // truncates toward zero, as Postgres does
		}
	}
	return bad
}

func modInts(a, b, out []int64) (bad []int) {
	for i := range out {
		switch y := b[i]; y {
		case 0:
			bad = append(bad, i)
		case -1:
			out[i] = 0 // Postgres special-cases this to avoid MIN % -1 trapping
		default:
			out[i] = a[i] % y // sign of the dividend, as Postgres
		}
	}
	return bad
}

// negInt is unary minus on an integer.
func negInt(t types.Type) func(*Context, int64) (int64, error) {
	lo, hi := t.IntRange()
	return func(_ *Context, x int64) (int64, error) {
		if x == math.MinInt64 || -x < lo || -x > hi {
			return 0, errIntRange(t)
		}
		return -x, nil
	}
}

// absInt is abs() on an integer.
func absInt(t types.Type) func(*Context, int64) (int64, error) {
	neg := negInt(t)
	return func(ctx *Context, x int64) (int64, error) {
		if x < 0 {
			return neg(ctx, x)
		}
		return x, nil
	}
}
