package session

import (
	"context"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/types"
)

// evalReturning evaluates a DML statement's RETURNING list over the rows
// it is about to write (laid out as r.Input). It runs before the write, so
// that an error in it (a division by zero) leaves the statement without
// effect, as in Postgres.
func (s *Session) evalReturning(r *planner.Returning, rows []types.Row) ([]types.Row, error) {
	if r == nil || len(rows) == 0 {
		return nil, nil
	}
	b := types.NewBuilder(r.Input, len(rows)+1)
	for _, row := range rows {
		b.Append(types.Insert, row)
	}
	c := b.Take()
	ectx := &expr.Context{Strict: true, Now: s.now()}
	cols := make([]types.Column, len(r.Exprs))
	for i, d := range r.Exprs {
		e, err := expr.Build(d, r.Input)
		if err != nil {
			return nil, err
		}
		if cols[i], err = e.Eval(ectx, c); err != nil {
			return nil, err
		}
	}
	out := make([]types.Row, len(rows))
	for i := range rows {
		out[i] = make(types.Row, len(cols))
		for j, col := range cols {
			out[i][j] = col.Get(i)
		}
	}
	return out, nil
}

// sendReturning sends the rows evalReturning made, after the write.
func sendReturning(ctx context.Context, r *planner.Returning, rows []types.Row, w pgwire.ResultWriter) error {
	if r == nil {
		return nil
	}
	if err := w.Describe(wireColumns(r.Columns)); err != nil {
		return err
	}
	for _, row := range rows {
		if err := w.WriteRow(ctx, row); err != nil {
			return err
		}
	}
	return nil
}

// writtenRows returns the rows of c a RETURNING list sees: the inserted rows
// and the new version of updated ones.
func writtenRows(c *types.Chunk) []types.Row {
	if c == nil {
		return nil
	}
	var out []types.Row
	for i := range c.Capacity() {
		if c.Visible(i) && c.Op(i).IsInsert() {
			out = append(out, c.Row(i))
		}
	}
	return out
}
