package session

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/types"
)

// writeBatch is the most rows sent to the engine in one Write: large
// INSERT … SELECT and COPY are split so no single DML log entry is huge.
const writeBatch = 4096

// insert writes the new rows (constant VALUES or a query's result).
func (s *Session) insert(ctx context.Context, ins *planner.Insert, w pgwire.ResultWriter) error {
	rows := ins.Rows
	if ins.Query != nil {
		var err error
		if rows, err = s.collect(ctx, ins.Query); err != nil {
			return err
		}
	}
	if err := s.writeRows(ctx, ins.Table, visibleTypes(ins.Table), rows, nil, types.Insert); err != nil {
		return err
	}
	if err := s.maybeImplicitFlush(ctx); err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("INSERT 0 %d", len(rows)))
}

// delete writes a Delete of every matching row (all columns, so the
// hidden row id names the row).
func (s *Session) delete(ctx context.Context, d *planner.Delete, w pgwire.ResultWriter) error {
	rows, err := s.collect(ctx, d.Query)
	if err != nil {
		return err
	}
	if err := s.writeRows(ctx, d.Table, d.Table.Table.Types, rows, nil, types.Delete); err != nil {
		return err
	}
	if err := s.maybeImplicitFlush(ctx); err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("DELETE %d", len(rows)))
}

// update writes each change as an UpdateDelete of the old row followed by
// an UpdateInsert of the new one, so views see one update per row.
func (s *Session) update(ctx context.Context, u *planner.Update, w pgwire.ResultWriter) error {
	rows, err := s.collect(ctx, u.Query)
	if err != nil {
		return err
	}
	n := len(u.Table.Columns)
	olds, news := make([]types.Row, len(rows)), make([]types.Row, len(rows))
	for i, r := range rows {
		olds[i], news[i] = r[:n], r[n:2*n]
	}
	if err := s.writeUpdate(ctx, u.Table, olds, news); err != nil {
		return err
	}
	if err := s.maybeImplicitFlush(ctx); err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("UPDATE %d", len(rows)))
}

// writeUpdate writes an UPDATE's changes. When a row's primary key changes
// it may move onto a key another row of the statement vacates (SET id = id
// + 1); written pair by pair, the new row would land on that key before the
// old one left it, and the old one's delete would then remove it. So a
// statement that moves keys deletes every old row first and then inserts
// every new one, in one write; otherwise each row is one update pair.
func (s *Session) writeUpdate(ctx context.Context, rel *catalog.Relation, olds, news []types.Row) error {
	ts := rel.Table.Types
	if !movesKeys(rel.PK, olds, news) {
		return s.writeRows(ctx, rel, ts, olds, news, types.UpdateDelete)
	}
	// One write, however large: a crash between a write of deletes and one
	// of inserts would lose rows the statement only meant to move.
	b := types.NewBuilder(ts, 2*len(olds)+1)
	for _, r := range olds {
		b.Append(types.Delete, r)
	}
	for _, r := range news {
		b.Append(types.Insert, r)
	}
	return s.e.Write(ctx, rel.Name, b.Take())
}

// movesKeys reports whether any row's primary key columns change.
func movesKeys(pk []int, olds, news []types.Row) bool {
	for i := range olds {
		for _, c := range pk {
			if types.Compare(olds[i][c], news[i][c]) != 0 {
				return true
			}
		}
	}
	return false
}

func (s *Session) maybeImplicitFlush(ctx context.Context) error {
	if !s.vars.bool("implicit_flush") {
		return nil
	}
	return s.e.Flush(ctx)
}

func visibleTypes(rel *catalog.Relation) []types.Type {
	var ts []types.Type
	for _, c := range rel.Columns {
		if !c.Hidden {
			ts = append(ts, c.Type)
		}
	}
	return ts
}

// writeRows sends rows (and, for updates, each row's new version right
// after it) to a table in chunks of at most writeBatch rows; an update's
// pair never straddles two chunks.
func (s *Session) writeRows(ctx context.Context, rel *catalog.Relation, ts []types.Type, rows, news []types.Row, op types.Op) error {
	size := writeBatch
	if news != nil {
		size *= 2
	}
	b := types.NewBuilder(ts, size+1)
	flush := func() error {
		c := b.Take()
		if c == nil {
			return nil
		}
		return s.e.Write(ctx, rel.Name, c)
	}
	for i, r := range rows {
		b.Append(op, r)
		if news != nil {
			b.Append(types.UpdateInsert, news[i])
		}
		if b.Len() >= size {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
