package expr

import (
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A scalar subquery that may return several rows is planned as its row
// count and one of its values (the planner's one-row aggregation); this
// expression turns the pair back into the subquery's value, failing where
// Postgres would. Only visible rows can fail, so a subquery under a CASE
// branch not taken, or on a row filtered out, raises nothing. A subquery
// run per outer row (a batch apply) also passes the error its run for
// the row met, as "SQLSTATE message" text (NULL: none), raised the same
// way, so it too fails only where Postgres would evaluate it.

func buildSingleRow(args []Expr) (Expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, errBuild("single_row takes 2 or 3 arguments, got %d", len(args))
	}
	if args[0].Type() != types.TInt64 {
		return nil, errBuild("single_row count must be bigint, not %s", args[0].Type())
	}
	e := &singleRowExpr{count: args[0], val: args[1]}
	if len(args) == 3 {
		if args[2].Type() != types.TVarchar {
			return nil, errBuild("single_row error must be text, not %s", args[2].Type())
		}
		e.err = args[2]
	}
	return e, nil
}

// singleRowExpr is KindSingleRow.
type singleRowExpr struct {
	count, val Expr
	err        Expr // nil: no error column
}

// RowErrorText is how a row's error travels in a single_row error
// column: its SQLSTATE, a space, its message.
func RowErrorText(err error) string {
	msg := err.Error()
	if e, ok := sqlerr.As(err); ok {
		msg = e.Message
	}
	return string(sqlerr.CodeOf(err)) + " " + msg
}

// rowErrorOf turns RowErrorText back into the error.
func rowErrorOf(text string) error {
	code, msg, _ := strings.Cut(text, " ")
	return sqlerr.New(sqlerr.Code(code), msg)
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
	var errs *types.Vec[string]
	if e.err != nil {
		if errs, err = evalAs[string](ctx, e.err, c); err != nil {
			return nil, err
		}
	}
	s := &evalState{ctx: ctx, chunk: c}
	ok := visibleMask(c)
	failed := false
	for i := 0; i < c.Capacity(); i++ {
		var rowErr error
		switch {
		case !ok.Get(i):
		case errs != nil && !errs.Nulls.Get(i):
			rowErr = rowErrorOf(errs.Vals[i])
		case !counts.Nulls.Get(i) && counts.Vals[i] > 1:
			rowErr = errMoreThanOneRow()
		}
		if rowErr != nil {
			if err := s.rowError(i, rowErr); err != nil {
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
