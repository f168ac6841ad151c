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
