package engine

import (
	"context"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// A table keyed by its declared primary key trusts its log to hold exact
// changes (plan.Materialize.CheckedWrites): an insert of a key it does not
// hold, a delete or update of the row it holds. Statements make them so by
// reading the keys they write. Write takes changes as upserts instead, so
// for such a table it reads the keys first, under the table's lock, and
// writes what they do.

// checkedWrites reports whether rel's materialize trusts its log.
func checkedWrites(rel *catalog.Relation) bool {
	return rel.Kind == catalog.KindTable && !hasRowID(rel)
}

// writeUpserts writes c to a checked table as upserts: an insert over a
// held key replaces its row, a delete of an absent key does nothing.
func (e *Engine) writeUpserts(ctx context.Context, rel *catalog.Relation, c *types.Chunk) error {
	w, err := e.LockTable(ctx, rel)
	if err != nil {
		return err
	}
	defer w.Close()
	exact, err := e.upsertChanges(ctx, rel, c)
	if err != nil || exact == nil || exact.Cardinality() == 0 {
		return err
	}
	return w.Write(ctx, exact)
}

// upsertChanges returns the exact changes c's upserts make to rel's latest
// state. The caller holds the table's lock.
func (e *Engine) upsertChanges(ctx context.Context, rel *catalog.Relation, c *types.Chunk) (*types.Chunk, error) {
	keys := newPKKeys(rel)
	desc := toDesc(rel)
	latest := e.LatestRows()
	held := map[string]types.Row{} // the chunk's keys so far: nil = absent
	b := types.NewUnboundedBuilder(c.Types())
	for _, i := range c.VisibleIndices() {
		pk, key, err := keys.of(c, i)
		if err != nil {
			return nil, err
		}
		cur, known := held[string(key)]
		if !known {
			if cur, _, err = latest.Get(ctx, desc, pk); err != nil {
				return nil, err
			}
		}
		row, insert := c.Row(i), c.Op(i).IsInsert()
		switch {
		case insert && cur != nil:
			b.Append(types.UpdateDelete, cur)
			b.Append(types.UpdateInsert, row)
		case insert:
			b.Append(types.Insert, row)
		case cur != nil:
			b.Append(types.Delete, cur)
		}
		if !insert {
			row = nil
		}
		held[string(key)] = row
	}
	return b.Take(), nil
}

// A table keyed by its hidden row id trusts its update pairs as much
// (plan.Materialize.FreshInserts: they go to its state as overwrites,
// unread): its statements read the rows they change under its lock. Write
// reads them too, so a delete or update of a row id the table no longer
// holds does nothing and a pair's old row is the one held.

// writeRowIDChanges writes c to a table keyed by its row id with every
// delete and update pair checked against the table's latest rows.
func (e *Engine) writeRowIDChanges(ctx context.Context, rel *catalog.Relation, c *types.Chunk) error {
	w, err := e.LockTable(ctx, rel)
	if err != nil {
		return err
	}
	defer w.Close()
	exact, err := e.rowIDChanges(ctx, rel, c)
	if err != nil || exact == nil || exact.Cardinality() == 0 {
		return err
	}
	return w.Write(ctx, exact)
}

// rowIDChanges returns c's inserts as they are and its deletes and update
// pairs of rows rel holds, with the rows as held. The caller holds the
// table's lock.
func (e *Engine) rowIDChanges(ctx context.Context, rel *catalog.Relation, c *types.Chunk) (*types.Chunk, error) {
	keys := newPKKeys(rel)
	desc := toDesc(rel)
	// A snapshot: the table's fresh rows are read by row id from there
	// (LatestRows reads keys of tables without any).
	latest, err := e.LatestSnapshot(ctx, false)
	if err != nil {
		return nil, err
	}
	defer latest.Close()
	held := map[string]types.Row{} // the chunk's row ids so far: nil = gone
	b := types.NewUnboundedBuilder(c.Types())
	keepPair := false // the last update pair's old row is held
	for _, i := range c.VisibleIndices() {
		op := c.Op(i)
		switch op {
		case types.Insert:
			b.Append(op, c.Row(i))
			continue
		case types.UpdateInsert:
			if !keepPair {
				continue
			}
			row := c.Row(i)
			b.Append(op, row)
			_, key, err := keys.of(c, i)
			if err != nil {
				return nil, err
			}
			held[string(key)] = row
			continue
		}
		pk, key, err := keys.of(c, i)
		if err != nil {
			return nil, err
		}
		cur, known := held[string(key)]
		if !known {
			if cur, _, err = latest.Get(ctx, desc, pk); err != nil {
				return nil, err
			}
		}
		keepPair = op == types.UpdateDelete && cur != nil
		if cur != nil {
			b.Append(op, cur)
		}
		held[string(key)] = nil // a kept pair's new row replaces it
	}
	return b.Take(), nil
}
