package expr

import (
	"github.com/sluice-db/sluice/internal/types"
)

// Conditional expressions evaluate a branch only over the rows that reach
// it: the branch sees the chunk with a visibility mask of those rows, and
// errors on invisible rows are ignored (see evalState.rowError), so
// CASE WHEN x <> 0 THEN 1 / x END never divides by zero.

// visibleMask returns the rows of c that are visible, as a bitmap.
func visibleMask(c *types.Chunk) types.Bitmap {
	n := c.Capacity()
	m := make(types.Bitmap, (n+63)/64)
	for i := 0; i < n; i++ {
		if c.Visible(i) {
			m.Set(i)
		}
	}
	return m
}

func restrict(c *types.Chunk, mask types.Bitmap) *types.Chunk {
	r := c.WithColumns(c.Cols)
	r.SetVisibility(mask)
	return r
}

func datumColumn(t types.Type, ds []types.Datum) (types.Column, error) {
	col, err := types.NewColumn(t, len(ds))
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		col.Append(d)
	}
	return col, nil
}

func buildCase(args []Expr) (Expr, error) {
	if len(args) < 2 {
		return nil, errBuild("CASE needs a WHEN and a THEN")
	}
	var conds, results []Expr
	for i := 0; i+1 < len(args); i += 2 {
		cond, err := asBool("CASE/WHEN", args[i])
		if err != nil {
			return nil, err
		}
		conds = append(conds, cond)
		results = append(results, args[i+1])
	}
	if len(args)%2 == 1 {
		results = append(results, args[len(args)-1])
	}
	results, t, err := unify("CASE", results)
	if err != nil {
		return nil, err
	}
	e := &caseExpr{conds: conds, thens: results[:len(conds)], typ: t}
	if len(results) > len(conds) {
		e.els = results[len(conds)]
	}
	return e, nil
}

func buildSimpleCase(args []Expr) (Expr, error) {
	if len(args) < 3 {
		return nil, errBuild("simple CASE needs an operand, a WHEN and a THEN")
	}
	operand := args[0]
	searched := make([]Expr, 0, len(args)-1)
	rest := args[1:]
	for i := 0; i+1 < len(rest); i += 2 {
		pair, ct, err := unify("CASE/WHEN", []Expr{operand, rest[i]})
		if err != nil {
			return nil, err
		}
		cond, err := newCompare(opEQ, ct, pair[0], pair[1])
		if err != nil {
			return nil, err
		}
		searched = append(searched, cond, rest[i+1])
	}
	if len(rest)%2 == 1 {
		searched = append(searched, rest[len(rest)-1])
	}
	return buildCase(searched)
}

// caseExpr is a searched CASE.
type caseExpr struct {
	conds, thens []Expr
	els          Expr // nil: ELSE NULL
	typ          types.Type
}

func (e *caseExpr) Type() types.Type { return e.typ }

func (e *caseExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	n := c.Capacity()
	out := make([]types.Datum, n)
	remaining := visibleMask(c)
	for k, cond := range e.conds {
		if !remaining.Any() {
			break
		}
		cv, err := evalAs[bool](ctx, cond, restrict(c, remaining))
		if err != nil {
			return nil, err
		}
		var taken types.Bitmap
		for i := 0; i < n; i++ {
			if remaining.Get(i) && !cv.Nulls.Get(i) && cv.Vals[i] {
				taken.Set(i)
				remaining.Clear(i)
			}
		}
		if err := fillFrom(ctx, e.thens[k], c, taken, out); err != nil {
			return nil, err
		}
	}
	if e.els != nil && remaining.Any() {
		if err := fillFrom(ctx, e.els, c, remaining, out); err != nil {
			return nil, err
		}
	}
	return datumColumn(e.typ, out)
}

// fillFrom evaluates e over the rows in mask and stores their values.
func fillFrom(ctx *Context, e Expr, c *types.Chunk, mask types.Bitmap, out []types.Datum) error {
	if !mask.Any() {
		return nil
	}
	col, err := e.Eval(ctx, restrict(c, mask))
	if err != nil {
		return err
	}
	for i := range out {
		if mask.Get(i) {
			out[i] = col.Get(i)
		}
	}
	return nil
}

func buildCoalesce(args []Expr) (Expr, error) {
	if len(args) < 1 {
		return nil, errBuild("COALESCE needs at least one argument")
	}
	args, t, err := unify("COALESCE", args)
	if err != nil {
		return nil, err
	}
	return &coalesceExpr{args: args, typ: t}, nil
}

// coalesceExpr evaluates each argument only over the rows still NULL.
type coalesceExpr struct {
	args []Expr
	typ  types.Type
}

func (e *coalesceExpr) Type() types.Type { return e.typ }

func (e *coalesceExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	out := make([]types.Datum, c.Capacity())
	remaining := visibleMask(c)
	for _, a := range e.args {
		if !remaining.Any() {
			break
		}
		col, err := a.Eval(ctx, restrict(c, remaining))
		if err != nil {
			return nil, err
		}
		for i := range out {
			if remaining.Get(i) && !col.IsNull(i) {
				out[i] = col.Get(i)
				remaining.Clear(i)
			}
		}
	}
	return datumColumn(e.typ, out)
}

func buildNullIf(args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errBuild("NULLIF takes 2 arguments, got %d", len(args))
	}
	args, t, err := unify("NULLIF", args)
	if err != nil {
		return nil, err
	}
	return &naryExpr{args: args, typ: t, fn: func(_ *Context, ds []types.Datum) (types.Datum, error) {
		if ds[0] != nil && ds[1] != nil && types.Compare(ds[0], ds[1]) == 0 {
			return nil, nil
		}
		return ds[0], nil
	}}, nil
}

func buildGreatest(greatest bool, args []Expr) (Expr, error) {
	if len(args) < 1 {
		return nil, errBuild("GREATEST/LEAST need at least one argument")
	}
	args, t, err := unify("GREATEST/LEAST", args)
	if err != nil {
		return nil, err
	}
	return &naryExpr{args: args, typ: t, fn: func(_ *Context, ds []types.Datum) (types.Datum, error) {
		var best types.Datum
		for _, d := range ds {
			if d == nil {
				continue // NULLs are ignored, as in Postgres
			}
			if best == nil || (types.Compare(d, best) > 0) == greatest && types.Compare(d, best) != 0 {
				best = d
			}
		}
		return best, nil
	}}, nil
}

func buildIn(not bool, args []Expr) (Expr, error) {
	if len(args) < 2 {
		return nil, errBuild("IN needs an operand and at least one value")
	}
	args, _, err := unify("IN", args)
	if err != nil {
		return nil, err
	}
	return &naryExpr{args: args, typ: types.TBool, fn: func(_ *Context, ds []types.Datum) (types.Datum, error) {
		if ds[0] == nil {
			return nil, nil
		}
		sawNull := false
		for _, d := range ds[1:] {
			switch {
			case d == nil:
				sawNull = true
			case types.Compare(ds[0], d) == 0:
				return !not, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return not, nil
	}}, nil
}
