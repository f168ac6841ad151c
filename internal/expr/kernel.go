package expr

import (
	"errors"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// Expr is a built, type-checked expression. Eval evaluates it over every
// row of c (visible or not; errors on invisible rows are ignored) and
// returns a column of c.Capacity() rows. The returned column may be one of
// c's own columns or shared with other results: callers must treat it as
// read-only. An Expr holds no per-evaluation state, so one Expr may be
// evaluated by several goroutines at once.
type Expr interface {
	Type() types.Type
	Eval(ctx *Context, c *types.Chunk) (types.Column, error)
}

// errNullResult is returned by a row function whose result is NULL without
// any error (nothing is counted).
var errNullResult = errors.New("expr: null result")

// newVec returns a column of n zero rows.
func newVec[T any](t types.Type, n int) *types.Vec[T] {
	return &types.Vec[T]{Typ: t, Vals: make([]T, n)}
}

// asVec returns col as a *Vec[T] of at least n rows. A mismatch is a bug in
// Build (or a chunk that does not match the input types the Expr was built
// for); it is reported as an error, not a panic, because it may come from
// a plan received over the network.
func asVec[T any](col types.Column, n int) (*types.Vec[T], error) {
	v, ok := col.(*types.Vec[T])
	if !ok {
		return nil, fmt.Errorf("expr: internal error: column %T is not %T", col, v)
	}
	if len(v.Vals) < n {
		return nil, fmt.Errorf("expr: internal error: column has %d rows, chunk %d", len(v.Vals), n)
	}
	return v, nil
}

// evalAs evaluates e over c and returns the result as a *Vec[T].
func evalAs[T any](ctx *Context, e Expr, c *types.Chunk) (*types.Vec[T], error) {
	col, err := e.Eval(ctx, c)
	if err != nil {
		return nil, err
	}
	return asVec[T](col, c.Capacity())
}

// unionNulls returns a fresh bitmap with every bit set in a or b.
func unionNulls(a, b types.Bitmap) types.Bitmap {
	if len(a) < len(b) {
		a, b = b, a
	}
	if !a.Any() && !b.Any() {
		return nil
	}
	out := a.Clone()
	for i, w := range b {
		out[i] |= w
	}
	return out
}

// zeroNulls restores the Vec invariant that a NULL slot holds the zero
// value, after a loop that computed every slot.
func zeroNulls[T any](v *types.Vec[T]) {
	var zero T
	for w, word := range v.Nulls {
		for word != 0 {
			i := w*64 + trailingZeros(word)
			word &= word - 1
			if i < len(v.Vals) {
				v.Vals[i] = zero
			}
		}
	}
}

func trailingZeros(w uint64) int {
	n := 0
	for w&1 == 0 {
		w >>= 1
		n++
	}
	return n
}

// failRow handles a row function's error at row i of out: it either
// returns the error (strict mode, visible row) or marks the row NULL.
func failRow[T any](s *evalState, out *types.Vec[T], i int, err error) error {
	if err != errNullResult {
		if err := s.rowError(i, err); err != nil {
			return err
		}
	}
	var zero T
	out.Vals[i] = zero
	out.Nulls.Set(i)
	return nil
}

// unaryExpr applies fn to every non-NULL row of its argument.
type unaryExpr[A, R any] struct {
	arg Expr
	typ types.Type
	fn  func(ctx *Context, a A) (R, error)
}

func (e *unaryExpr[A, R]) Type() types.Type { return e.typ }

func (e *unaryExpr[A, R]) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	in, err := evalAs[A](ctx, e.arg, c)
	if err != nil {
		return nil, err
	}
	n := c.Capacity()
	out := newVec[R](e.typ, n)
	out.Nulls = in.Nulls.Clone()
	s := evalState{ctx: ctx, chunk: c}
	for i := 0; i < n; i++ {
		if in.Nulls.Get(i) {
			continue
		}
		r, err := e.fn(ctx, in.Vals[i])
		if err != nil {
			if err := failRow(&s, out, i, err); err != nil {
				return nil, err
			}
			continue
		}
		out.Vals[i] = r
	}
	return out, nil
}

// binaryExpr applies fn to every row where both arguments are non-NULL.
type binaryExpr[A, B, R any] struct {
	l, r Expr
	typ  types.Type
	fn   func(ctx *Context, a A, b B) (R, error)
}

func (e *binaryExpr[A, B, R]) Type() types.Type { return e.typ }

func (e *binaryExpr[A, B, R]) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	a, err := evalAs[A](ctx, e.l, c)
	if err != nil {
		return nil, err
	}
	// A constant, non-NULL right argument (a literal, as in date_time -
	// INTERVAL '4' SECOND) is not copied into a column per chunk, which
	// for types without a typed fill meant boxing it once per row.
	if lit, ok := e.r.(*literalExpr); ok {
		if b, ok := lit.val.(B); ok {
			return e.apply(ctx, c, a.Vals, nil, b, unionNulls(a.Nulls, nil))
		}
	}
	b, err := evalAs[B](ctx, e.r, c)
	if err != nil {
		return nil, err
	}
	var none B
	return e.apply(ctx, c, a.Vals, b.Vals, none, unionNulls(a.Nulls, b.Nulls))
}

// apply computes fn of each row not NULL in nulls: its a and its b, or
// bc for every row when bs is nil.
func (e *binaryExpr[A, B, R]) apply(ctx *Context, c *types.Chunk, a []A, bs []B, bc B, nulls types.Bitmap) (types.Column, error) {
	n := c.Capacity()
	out := newVec[R](e.typ, n)
	out.Nulls = nulls
	s := evalState{ctx: ctx, chunk: c}
	for i := 0; i < n; i++ {
		if out.Nulls.Get(i) {
			continue
		}
		b := bc
		if bs != nil {
			b = bs[i]
		}
		r, err := e.fn(ctx, a[i], b)
		if err != nil {
			if err := failRow(&s, out, i, err); err != nil {
				return nil, err
			}
			continue
		}
		out.Vals[i] = r
	}
	return out, nil
}

// naryExpr applies fn to the boxed arguments of every row. It is the slow,
// general path for functions with many or variadic arguments. With strict
// set, a row with any NULL argument is NULL without calling fn.
type naryExpr struct {
	args   []Expr
	typ    types.Type
	strict bool
	fn     func(ctx *Context, args []types.Datum) (types.Datum, error)
}

func (e *naryExpr) Type() types.Type { return e.typ }

func (e *naryExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	n := c.Capacity()
	cols := make([]types.Column, len(e.args))
	for j, a := range e.args {
		col, err := a.Eval(ctx, c)
		if err != nil {
			return nil, err
		}
		if col.Len() < n {
			return nil, fmt.Errorf("expr: internal error: column has %d rows, chunk %d", col.Len(), n)
		}
		cols[j] = col
	}
	out, err := types.NewColumn(e.typ, n)
	if err != nil {
		return nil, err
	}
	s := evalState{ctx: ctx, chunk: c}
	row := make([]types.Datum, len(cols))
	for i := 0; i < n; i++ {
		d, err := e.evalRow(ctx, cols, row, i)
		if err != nil {
			d = nil
			if err != errNullResult {
				if err := s.rowError(i, err); err != nil {
					return nil, err
				}
			}
		}
		if err := types.CheckDatum(d, e.typ); err != nil {
			return nil, fmt.Errorf("expr: internal error: %w", err)
		}
		out.Append(d)
	}
	return out, nil
}

func (e *naryExpr) evalRow(ctx *Context, cols []types.Column, row []types.Datum, i int) (types.Datum, error) {
	for j, col := range cols {
		row[j] = col.Get(i)
		if row[j] == nil && e.strict {
			return nil, nil
		}
	}
	return e.fn(ctx, row)
}
