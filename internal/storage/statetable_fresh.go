package storage

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A table keyed by its hidden row id receives most of its rows as plain
// inserts of ids never used (a bulk COPY: a million of them in an epoch).
// Kept in the overlay, each row costs a boxed copy, a hash-map insert and
// its share of the seal's sort. InsertFresh keeps such rows as the chunk
// they came in instead: at the seal they are bucketed by vnode (ids rise
// within each vnode, so the keys come out sorted without a comparison)
// and encoded straight into the epoch's batch, before the overlay's
// writes, which are newer. Until the epoch commits, Get finds them by
// binary search of each chunk's id column. Scans of a table holding them
// are refused: only a table's materialize writes fresh rows, and it reads
// by key only.

// freshChunk is rows of c (ascending indices) whose fresh row ids, ids,
// rise; sealed is the epoch that sealed them (0: not yet).
type freshChunk struct {
	c      *types.Chunk
	rows   []int
	ids    []int64
	vnodes []uint16
	sealed uint64
}

// InsertFresh stores the given rows of c (ascending indices), all plain
// inserts whose key is a row id never used, without reading. It reports
// false (and stores nothing) when the table is not keyed by one int64
// column or the ids do not rise; the caller then inserts row by row.
func (t *StateTable) InsertFresh(c *types.Chunk, rows []int) (bool, error) {
	if t.broken != nil {
		return false, t.broken
	}
	if len(t.lay.desc.PK) != 1 || t.lay.pkTypes[0] != types.TInt64 || len(rows) == 0 || !t.sameTypes(c) {
		return false, nil
	}
	col := t.lay.desc.PK[0]
	vec, ok := c.Cols[col].(*types.Vec[int64])
	if !ok {
		return false, nil
	}
	ids := make([]int64, len(rows))
	for k, i := range rows {
		if vec.IsNull(i) || (k > 0 && vec.Vals[i] <= ids[k-1]) {
			return false, nil
		}
		ids[k] = vec.Vals[i]
	}
	t.maybePrune()
	hashes := codec.HashColumns(c, []int{col}, nil)
	fc := freshChunk{c: c, rows: slices.Clone(rows), ids: ids, vnodes: make([]uint16, len(rows))}
	for k, i := range rows {
		v := codec.VNodeOf(hashes[i])
		if !t.OwnsVNode(v) {
			return false, fmt.Errorf("storage: table %d vnode %d: %w", t.lay.desc.ID, v, ErrVNodeNotOwned)
		}
		fc.vnodes[k] = v
	}
	if t.rc.on {
		for _, v := range fc.vnodes {
			t.rc.n[v]++
			t.rc.mark(v)
		}
	}
	t.fresh = append(t.fresh, fc)
	return true, nil
}

// sameTypes reports whether c's columns are the table's (sealFresh encodes
// them as they are).
func (t *StateTable) sameTypes(c *types.Chunk) bool {
	if len(c.Cols) != len(t.lay.desc.Types) {
		return false
	}
	for j, col := range c.Cols {
		if col.Type() != t.lay.desc.Types[j] {
			return false
		}
	}
	return true
}

// freshGet finds row id among the fresh rows.
func (t *StateTable) freshGet(pk types.Row) (types.Row, bool) {
	if len(t.fresh) == 0 || len(pk) != 1 {
		return nil, false
	}
	id, ok := pk[0].(int64)
	if !ok {
		return nil, false
	}
	for _, fc := range t.fresh {
		if id < fc.ids[0] || id > fc.ids[len(fc.ids)-1] {
			continue
		}
		if k, found := slices.BinarySearch(fc.ids, id); found {
			return fc.c.Row(fc.rows[k]), true
		}
	}
	return nil, false
}

// hasUnsealedFresh reports whether fresh rows await a seal.
func (t *StateTable) hasUnsealedFresh() bool {
	return len(t.fresh) > 0 && t.fresh[len(t.fresh)-1].sealed == 0
}

// sealFresh encodes the unsealed fresh rows into b in key order and marks
// them sealed in epoch.
func (t *StateTable) sealFresh(b *pebble.Batch, epoch uint64) error {
	var start [codec.VNodeCount + 1]int
	var todo []*freshChunk
	for i := range t.fresh {
		fc := &t.fresh[i]
		if fc.sealed != 0 {
			continue
		}
		fc.sealed = epoch
		todo = append(todo, fc)
		for _, v := range fc.vnodes {
			start[v+1]++
		}
	}
	for v := 1; v <= codec.VNodeCount; v++ {
		start[v] += start[v-1]
	}
	type ref struct {
		fc *freshChunk
		k  int
	}
	order := make([]ref, start[codec.VNodeCount])
	next := start
	for _, fc := range todo {
		for k, v := range fc.vnodes {
			order[next[v]] = ref{fc, k}
			next[v]++
		}
	}
	// Straight from the columns: no row is boxed.
	pk := make(types.Row, 1)
	for _, r := range order {
		pk[0] = r.fc.ids[r.k]
		key, err := t.lay.appendKey(t.keyScratch[:0], r.fc.vnodes[r.k], pk)
		if err != nil {
			return err
		}
		t.keyScratch = key
		if t.valScratch, err = codec.EncodeValueColumns(t.valScratch[:0], r.fc.c.Cols, r.fc.rows[r.k]); err != nil {
			return fmt.Errorf("storage: table %d: encode row: %w", t.lay.desc.ID, err)
		}
		if err := b.Set(key, t.valScratch, nil); err != nil {
			return err
		}
	}
	return nil
}

// freshSealedSize estimates the bytes sealFresh adds to a batch.
func (t *StateTable) freshSealedSize() int {
	n := 0
	for _, fc := range t.fresh {
		if fc.sealed == 0 {
			n += len(fc.rows)
		}
	}
	if n == 0 {
		return 0
	}
	fc := t.fresh[len(t.fresh)-1]
	v, err := t.lay.encodeValue(nil, fc.c.Row(fc.rows[len(fc.rows)-1]))
	if err != nil {
		return 0
	}
	return n * (len(v) + stateKeyHeaderLen + 9 + 16) * 9 / 8
}

// pruneFresh drops the fresh rows of committed epochs: Pebble has them.
func (t *StateTable) pruneFresh(committed uint64) {
	n := 0
	for n < len(t.fresh) && t.fresh[n].sealed != 0 && t.fresh[n].sealed <= committed {
		n++
	}
	if n > 0 {
		t.fresh = slices.Delete(t.fresh, 0, n)
	}
}

// errFreshScan refuses a scan of a table holding uncommitted fresh rows.
func (t *StateTable) errFreshScan() error {
	if len(t.fresh) == 0 {
		return nil
	}
	return fmt.Errorf("storage: table %d: a scan while fresh inserts are uncommitted (only reads by key are supported)", t.lay.desc.ID)
}
