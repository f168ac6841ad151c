package session

import (
	"context"
	"os"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
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
	exprs, err := buildReturning(r)
	if err != nil {
		return nil, err
	}
	b := types.NewBuilder(r.Input, len(rows)+1)
	for _, row := range rows {
		b.Append(types.Insert, row)
	}
	out := make([]types.Row, 0, len(rows))
	err = evalList(exprs, &expr.Context{Strict: true, Now: s.now()}, b.Take(), func(row types.Row) error {
		out = append(out, row)
		return nil
	})
	return out, err
}

// buildReturning builds r's expressions over r.Input.
func buildReturning(r *planner.Returning) ([]expr.Expr, error) {
	exprs := make([]expr.Expr, len(r.Exprs))
	for i, d := range r.Exprs {
		e, err := expr.Build(d, r.Input)
		if err != nil {
			return nil, err
		}
		exprs[i] = e
	}
	return exprs, nil
}

// evalList evaluates exprs over c and hands each visible row's results to
// each, in order.
func evalList(exprs []expr.Expr, ectx *expr.Context, c *types.Chunk, each func(types.Row) error) error {
	cols := make([]types.Column, len(exprs))
	for i, e := range exprs {
		var err error
		if cols[i], err = e.Eval(ectx, c); err != nil {
			return err
		}
	}
	for i := range c.Capacity() {
		if !c.Visible(i) {
			continue
		}
		row := make(types.Row, len(cols))
		for j, col := range cols {
			row[j] = col.Get(i)
		}
		if err := each(row); err != nil {
			return err
		}
	}
	return nil
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

// returningSpoolBytes is the RETURNING rows a bulk statement keeps in
// memory before it spools them to a file (a variable for tests).
var returningSpoolBytes int64 = 8 << 20

// returningRows computes a bulk statement's RETURNING rows piece by piece,
// before the pieces are written, and keeps them in a spool until the
// statement is done: an INSERT … SELECT … RETURNING of millions of rows is
// held as a file, not in memory, and its rows are sent only once it is
// written, as Postgres sends them.
type returningRows struct {
	r     *planner.Returning
	exprs []expr.Expr
	ectx  *expr.Context
	spool *batch.Spool
	// deleted: the list is over the rows a DELETE removes, not the rows
	// written.
	deleted bool
}

func (s *Session) newReturningRows(r *planner.Returning) (*returningRows, error) {
	exprs, err := buildReturning(r)
	if err != nil {
		return nil, err
	}
	ts := make([]types.Type, len(r.Columns))
	for i, c := range r.Columns {
		ts[i] = c.Type
	}
	return &returningRows{r: r, exprs: exprs, ectx: &expr.Context{Strict: true, Now: s.now()},
		spool: batch.NewSpool(ts, os.TempDir(), returningSpoolBytes)}, nil
}

// add evaluates the list over the rows c inserts (laid out as r.Input,
// as written; the new row of an update pair), or deletes, and keeps the
// results.
func (rr *returningRows) add(c *types.Chunk) error {
	if len(c.Cols) != len(rr.r.Input) {
		return sqlerr.Errorf(sqlerr.Internal, "RETURNING over %d columns, want %d", len(c.Cols), len(rr.r.Input))
	}
	seen := func(op types.Op) bool { return op.IsInsert() != rr.deleted }
	idx := make([]int, 0, c.Cardinality())
	for i := range c.Capacity() {
		if c.Visible(i) && seen(c.Op(i)) {
			idx = append(idx, i)
		}
	}
	if len(idx) < c.Cardinality() {
		c = gatherRows(c, idx)
	}
	return evalList(rr.exprs, rr.ectx, c, rr.spool.Add)
}

// send sends the rows kept, once the statement is written.
func (rr *returningRows) send(ctx context.Context, w pgwire.ResultWriter) error {
	if err := w.Describe(wireColumns(rr.r.Columns)); err != nil {
		return err
	}
	return rr.spool.Each(ctx, func(row types.Row) error { return w.WriteRow(ctx, row) })
}

func (rr *returningRows) close() {
	if rr != nil {
		rr.spool.Close()
	}
}
