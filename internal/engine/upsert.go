package engine

import (
	"context"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A table keyed by its declared primary key trusts its log to hold exact
// changes (plan.Materialize.CheckedWrites): an insert of a key it does not
// hold, a delete or update of the row it holds. Statements make them so by
// reading the keys they write. Write takes changes as upserts instead, so
// for such a table it reads the keys first, under the table's lock, and
// writes what they do.

// checkedWrites reports whether rel's materialize trusts its log. A table
// fed by a connector does not: the connector writes keys without reading
// them, so its materialize reads each key and turns an insert over a held
// one into an update.
func checkedWrites(rel *catalog.Relation) bool {
	return rel.Kind == catalog.KindTable && !hasRowID(rel) && rel.Connector == nil
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
	switch {
	case rel.AppendOnly:
		return sqlerr.New(sqlerr.FeatureNotSupported, "append-only table does not support update or delete")
	case len(c.Cols) != len(rel.Columns):
		return sqlerr.Errorf(sqlerr.Internal, "delete from %s without its row id", rel.Name)
	}
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
	// A snapshot: the table's fresh rows are read by row id from there
	// (LatestRows reads keys of tables without any).
	latest, err := e.LatestSnapshot(ctx, false)
	if err != nil {
		return nil, err
	}
	defer latest.Close()
	r := rowIDReader{rel: rel, keys: newPKKeys(rel), desc: toDesc(rel), latest: latest, held: map[string]types.Row{}}
	b := types.NewUnboundedBuilder(c.Types())
	for _, i := range c.VisibleIndices() {
		op, row := c.Op(i), c.Row(i)
		if op == types.Insert {
			b.Append(op, row)
			continue
		}
		pk, key, err := r.key(row)
		if err != nil {
			return nil, err
		}
		if op == types.UpdateInsert {
			if key != r.pairKey {
				return nil, sqlerr.Errorf(sqlerr.Internal, "update of %s changes a row id", rel.Name)
			}
			if r.pairKept {
				b.Append(op, row)
				r.held[key] = row
			}
			r.pairKey, r.pairKept = "", false
			continue
		}
		cur, err := r.current(ctx, pk, key)
		if err != nil {
			return nil, err
		}
		if cur != nil {
			b.Append(op, cur)
		}
		r.held[key] = nil // a kept pair's new row replaces it
		if op == types.UpdateDelete {
			r.pairKey, r.pairKept = key, cur != nil
		}
	}
	return b.Take(), nil
}

// rowIDReader reads the rows a chunk's changes name by row id: from the
// chunk's own earlier changes, else from the table's latest state.
type rowIDReader struct {
	rel    *catalog.Relation
	keys   *pkKeys
	desc   storage.TableDesc
	latest *storage.Snapshot
	held   map[string]types.Row // the chunk's row ids so far: nil = gone
	// pairKey is the row id of the update pair begun (its old row's),
	// pairKept whether that row is held.
	pairKey  string
	pairKept bool
}

// key returns row's row id and its encoding.
func (r *rowIDReader) key(row types.Row) (types.Row, string, error) {
	pk := make(types.Row, len(r.rel.PK))
	for j, col := range r.rel.PK {
		pk[j] = row[col]
	}
	enc, err := codec.EncodeKey(nil, pk, r.keys.types, r.keys.orders)
	return pk, string(enc), err
}

// current returns the row held under row id pk (encoded: key), nil if
// none.
func (r *rowIDReader) current(ctx context.Context, pk types.Row, key string) (types.Row, error) {
	if cur, known := r.held[key]; known {
		return cur, nil
	}
	cur, _, err := r.latest.Get(ctx, r.desc, pk)
	return cur, err
}
