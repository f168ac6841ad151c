package expr

import (
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A scalar subquery that may return several rows is planned as its row
// count and one of its values (the planner's one-row aggregation); this
// expression turns the pair back into the subquery's value, failing where
// Postgres would. Only visible rows can fail, so a subquery under a CASE
// branch not taken, or on a row filtered out, raises nothing.

func buildSingleRow(args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errBuild("single_row takes 2 arguments, got %d", len(args))
	}
	if args[0].Type() != types.TInt64 {
		return nil, errBuild("single_row count must be bigint, not %s", args[0].Type())
	}
	return &singleRowExpr{count: args[0], val: args[1]}, nil
}

// singleRowExpr is KindSingleRow.
type singleRowExpr struct {
	count, val Expr
}

func (e *singleRowExpr) Type() types.Type { return e.val.Type() }

func errMoreThanOneRow() error {
	return sqlerr.New(sqlerr.CardinalityViolation, "more than one row returned by a subquery used as an expression")
}

// Eval returns the value over the rows whose count is at most one; the
// others are row errors, NULL when the context lets evaluation go on.
func (e *singleRowExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	counts, err := evalAs[int64](ctx, e.count, c)
	if err != nil {
		return nil, err
	}
	s := &evalState{ctx: ctx, chunk: c}
	ok := visibleMask(c)
	failed := false
	for i := 0; i < c.Capacity(); i++ {
		if ok.Get(i) && !counts.Nulls.Get(i) && counts.Vals[i] > 1 {
			if err := s.rowError(i, errMoreThanOneRow()); err != nil {
				return nil, err
			}
			ok.Clear(i)
			failed = true
		}
	}
	if !failed {
		return e.val.Eval(ctx, c)
	}
	out := make([]types.Datum, c.Capacity())
	if err := fillFrom(ctx, e.val, c, ok, out); err != nil {
		return nil, err
	}
	return datumColumn(e.Type(), out)
}
