package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Row counts. A table whose owner knows when a write adds or removes a row
// (the materialize executor of a table or view) keeps, per vnode, how many
// rows it holds, under c|tableID|vnode. The counts are written into the
// same staged batch as the rows, so they commit in the same epoch, are
// discarded with them (recovery, a dropped actor, a dropped table) and
// survive a restart exactly as the rows do. SHOW JOBS divides a backfill's
// scanned rows by its upstream's count; reading it costs one short prefix
// scan, never a scan of the table. Counting per vnode rather than per actor
// keeps the counts right when vnodes move between actors.

// rowCountPrefix returns c|tableID.
func rowCountPrefix(tableID uint32) []byte {
	b := make([]byte, 0, 7)
	b = append(b, prefixRowCount)
	return binary.BigEndian.AppendUint32(b, tableID)
}

func rowCountKey(tableID uint32, vnode uint16) []byte {
	return binary.BigEndian.AppendUint16(rowCountPrefix(tableID), vnode)
}

// rowCounts is a StateTable's per-vnode counts, including unsealed writes.
type rowCounts struct {
	on    bool
	n     []int64 // by vnode
	dirty []uint16
	isDir []bool // by vnode
}

// TrackRowCounts makes the table keep its per-vnode row counts; the owner
// then reports every row it adds or removes with CountRows. It loads the
// committed counts of the owned vnodes and must be called before the first
// write. A vnode without a count (a data directory written before counts
// existed) is counted once from committed data, and its count is written
// with the next seal.
func (t *StateTable) TrackRowCounts(ctx context.Context) error {
	if t.rc.on {
		return nil
	}
	if !t.overlay.empty() || len(t.fresh) > 0 {
		return fmt.Errorf("storage: table %d: row counts must be tracked before the first write", t.lay.desc.ID)
	}
	t.rc = rowCounts{on: true, n: make([]int64, codec.VNodeCount), isDir: make([]bool, codec.VNodeCount)}
	// One scan each, not a point read per vnode: on a store with many
	// files, 256 Gets of absent keys cost a second of CPU per new table.
	committed, err := t.store.committedRowCounts(t.lay.desc.ID)
	if err != nil {
		return err
	}
	var missing []uint16
	for _, v := range t.owned {
		if n, ok := committed[v]; ok {
			t.rc.n[v] = n
		} else {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	counted, err := t.countVNodes(ctx)
	if err != nil {
		return err
	}
	for _, v := range missing {
		t.rc.n[v] = counted[v]
		t.rc.mark(v)
	}
	return nil
}

// CountRows adds delta to the count of the vnode that row's PK maps to.
func (t *StateTable) CountRows(row types.Row, delta int64) {
	if !t.rc.on {
		return
	}
	v, _ := t.lay.vnodeOf(t.lay.pkOf(row))
	t.rc.n[v] += delta
	t.rc.mark(v)
}

func (rc *rowCounts) mark(v uint16) {
	if !rc.isDir[v] {
		rc.isDir[v] = true
		rc.dirty = append(rc.dirty, v)
	}
}

// sealCounts writes the changed counts into the epoch's batch.
func (t *StateTable) sealCounts(b *pebble.Batch) error {
	for _, v := range t.rc.dirty {
		val := binary.BigEndian.AppendUint64(nil, uint64(t.rc.n[v]))
		if err := b.Set(rowCountKey(t.lay.desc.ID, v), val, nil); err != nil {
			return err
		}
		t.rc.isDir[v] = false
	}
	t.rc.dirty = t.rc.dirty[:0]
	return nil
}

// countVNodes counts the committed rows of every vnode of the table in
// one scan (the upgrade path; for a new table the range is empty).
func (t *StateTable) countVNodes(ctx context.Context) ([]int64, error) {
	lo := tablePrefix(t.lay.desc.ID)
	it, err := t.store.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return nil, fmt.Errorf("storage: count rows of table %d: %w", t.lay.desc.ID, err)
	}
	n := make([]int64, codec.VNodeCount)
	for i, ok := 0, it.First(); ok; i, ok = i+1, it.Next() {
		if i%1024 == 0 && ctx.Err() != nil {
			_ = it.Close()
			return nil, ctx.Err()
		}
		k := it.Key()
		if len(k) < stateKeyHeaderLen {
			continue
		}
		n[binary.BigEndian.Uint16(k[stateKeyHeaderLen-2:])%codec.VNodeCount]++
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("storage: count rows of table %d: %w", t.lay.desc.ID, err)
	}
	return n, nil
}

// committedRowCounts returns the table's committed counts by vnode.
func (s *Store) committedRowCounts(tableID uint32) (map[uint16]int64, error) {
	p := rowCountPrefix(tableID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("storage: row counts of table %d: %w", tableID, err)
	}
	out := make(map[uint16]int64)
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		if len(k) != len(p)+2 || len(v) != 8 {
			_ = it.Close()
			return nil, fmt.Errorf("storage: row counts of table %d: malformed entry", tableID)
		}
		out[binary.BigEndian.Uint16(k[len(p):])] = int64(binary.BigEndian.Uint64(v))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("storage: row counts of table %d: %w", tableID, err)
	}
	return out, nil
}

// RowCount returns the committed number of rows of a table whose owners
// track row counts (the tables of tables and materialized views). ok is
// false when no count has been committed yet. It reads at most one small
// key per vnode.
func (s *Store) RowCount(tableID uint32) (n int64, ok bool, err error) {
	p := rowCountPrefix(tableID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return 0, false, fmt.Errorf("storage: row count of table %d: %w", tableID, err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		v := it.Value()
		if len(v) != 8 {
			_ = it.Close()
			return 0, false, fmt.Errorf("storage: row count of table %d: malformed value", tableID)
		}
		n += int64(binary.BigEndian.Uint64(v))
		ok = true
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return 0, false, fmt.Errorf("storage: row count of table %d: %w", tableID, err)
	}
	return n, ok, nil
}
