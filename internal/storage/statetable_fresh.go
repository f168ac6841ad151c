package storage

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A table keyed by its hidden row id receives most of its rows as plain
// inserts of ids never used (a bulk COPY: a million of them in an epoch).
// Kept in the overlay, each row costs a boxed copy, a hash-map insert and
// its share of the seal's sort. InsertFresh keeps such rows as one
// encoded run per chunk instead: at the seal they are bucketed by vnode
// (ids rise within each vnode, so the keys come out sorted without a
// comparison) and written into the epoch's batch or file, before the
// overlay's writes, which are newer. Until the epoch commits, Get finds
// them by binary search of each run's ids. Scans of a table holding them
// are refused: only a table's materialize writes fresh rows, and it reads
// by key only. Tables with any other key, and views whose input is
// trusted, keep their bulk inserts the same way (fresh_keys.go).

// freshChunk is fresh rows in value encoding (row k is vals.row(k)),
// whose keys (ids, or keys: fresh_keys.go) rise; sealed is the epoch that
// sealed them (0: not yet). The rows are encoded as they are inserted, not at the seal: the
// encoding is a little over half the memory of the chunk they came in,
// which a bulk epoch would otherwise keep whole until its seal.
type freshChunk struct {
	vals encodedRows
	// ids are the rows' keys in a table keyed by one bigint; keys their
	// key encodings in any other (fresh_keys.go).
	ids    []int64
	keys   encodedRows
	vnodes []uint16
	sealed uint64
	// lo and hi are the first and last id (loKey and hiKey the first and
	// last key encoding), n the rows: kept when a spill lets ids, keys and
	// vnodes go.
	lo, hi       int64
	loKey, hiKey []byte
	byKey        bool // keys, not ids
	overwrite    bool // the rows may replace rows the table holds
	n            int
	// spill, when set, holds the rows instead of vals, ids and vnodes
	// (statetable_spill.go): Get finds a row through the file alone.
	spill *spillFile
	// presealed: spill is a file written for the unsealed epoch
	// (preseal.go), which its seal stages as it is.
	presealed bool
}

// InsertFresh stores the given rows of c (ascending indices), all plain
// inserts of keys the table does not hold, without reading. In a table
// keyed and distributed by one bigint, their ids rise, or fall back at
// most maxFreshFalls times (a chunk cut across the records of a bulk
// statement's pieces, each sorted by its key): each rising stretch is a
// fresh chunk of its own; rows whose ids fall back more often are sorted.
// Any other table's rows are sorted by key (fresh_keys.go). It reports
// false (and stores nothing) when a key is there twice or a bigint key is
// NULL; the caller then inserts row by row.
func (t *StateTable) InsertFresh(c *types.Chunk, rows []int) (bool, error) {
	return t.insertFresh(c, rows, false)
}

// InsertFreshUnwritten is InsertFresh for rows of keys the table holds
// nowhere, while it may hold uncommitted writes of other keys (a view's
// inserts after a few went row by row): it refuses (false, storing
// nothing) when one of the keys has an uncommitted write, sealed or not,
// because fresh rows are sealed before the overlay's writes and such a
// write (a delete before the insert) is older. With no uncommitted write
// it is InsertFresh.
func (t *StateTable) InsertFreshUnwritten(c *types.Chunk, rows []int) (bool, error) {
	t.maybePrune()
	if !t.overlay.empty() {
		pk := make(types.Row, len(t.lay.desc.PK))
		for _, i := range rows {
			for j, col := range t.lay.desc.PK {
				pk[j] = c.Cols[col].Get(i)
			}
			key, err := t.keyOf(pk)
			if err != nil {
				return false, err
			}
			if _, written := t.overlay.get(key); written {
				return false, nil
			}
		}
	}
	return t.insertFresh(c, rows, false)
}

// OverwriteFresh is InsertFresh for rows that replace any row with their
// key (an UPDATE's new rows): fresh rows are sealed before the epoch's
// overlay writes and after every committed one, so they need no read. The
// table's row counts do not change.
func (t *StateTable) OverwriteFresh(c *types.Chunk, rows []int) (bool, error) {
	return t.insertFresh(c, rows, true)
}

func (t *StateTable) insertFresh(c *types.Chunk, rows []int, overwrite bool) (bool, error) {
	if !t.takesFresh(len(rows)) || !t.sameTypes(c) {
		return false, t.broken
	}
	if t.freshByKey() {
		return t.insertFreshKeyed(c, rows, overwrite)
	}
	vec, ok := c.Cols[t.lay.desc.PK[0]].(*types.Vec[int64])
	if !ok {
		return false, nil
	}
	ids := make([]int64, len(rows))
	var falls []int // where a stretch starts again lower
	for k, i := range rows {
		if vec.IsNull(i) {
			return false, nil
		}
		if ids[k] = vec.Vals[i]; k > 0 && ids[k] <= ids[k-1] {
			falls = append(falls, k)
		}
	}
	if len(falls) > maxFreshFalls {
		if rows, ids, ok = sortedByID(rows, ids); !ok {
			return false, nil
		}
		falls = nil
	}
	ends := append(falls, len(rows))
	if repeatsAcross(ids, ends) {
		return false, nil // a key twice: the overlay keeps the later
	}
	start := 0
	for _, end := range ends {
		vals, err := t.encodeRows(c, rows[start:end])
		if err != nil {
			return false, err
		}
		if err := t.addIDs(ids[start:end:end], vals, overwrite); err != nil {
			return false, err
		}
		start = end
	}
	return true, nil
}

// sortedByID returns rows and their ids sorted by id, and false when an
// id repeats.
func sortedByID(rows []int, ids []int64) ([]int, []int64, bool) {
	order := make([]int, len(rows))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ids[a], ids[b]) })
	sortedRows, sortedIDs := make([]int, len(rows)), make([]int64, len(rows))
	for k, o := range order {
		if sortedRows[k], sortedIDs[k] = rows[o], ids[o]; k > 0 && sortedIDs[k] == sortedIDs[k-1] {
			return nil, nil, false
		}
	}
	return sortedRows, sortedIDs, true
}

// repeatsAcross reports whether an id of ids is in two of its rising
// stretches, which end at ends (a repeat within one cannot rise).
func repeatsAcross(ids []int64, ends []int) bool {
	start := 0
	for j, end := range ends {
		for _, id := range ids[start:end] {
			from := 0
			for _, e := range ends[:j] {
				if _, ok := slices.BinarySearch(ids[from:e], id); ok {
					return true
				}
				from = e
			}
		}
		start = end
	}
	return false
}

// maxFreshFalls is how often the ids of rows InsertFresh takes may fall
// back before it sorts them. Refused, a chunk that held the end of one
// sorted piece and the start of the next went row by row into the
// overlay, and so did every later row of the epoch (a trusted run then
// needed an empty overlay): an INSERT … SELECT … ON CONFLICT DO NOTHING
// of two million rows peaked at 750 MB.
const maxFreshFalls = 3

// InsertFreshEncoded is InsertFresh for rows already in the table's value
// encoding (stream.FreshRows: a bulk load's DML records): row k is
// rows.Buf[rows.Spans[2k]:rows.Spans[2k+1]], a plain insert whose row id,
// in key column idCol, is ids[k]. The table keeps ids, rows.Spans and
// rows.Buf, which must not change (a table's materialize passes the same
// rows on to its views, which keep them too).
func (t *StateTable) InsertFreshEncoded(ids []int64, idCol int, rows EncodedRows) (bool, error) {
	if !t.takesFresh(len(ids)) || t.freshByKey() || idCol != t.lay.desc.PK[0] || len(rows.Spans) != 2*len(ids) {
		return false, t.broken
	}
	vals := encodedRows{buf: rows.Buf, at: rows.Spans}
	for k := range ids {
		if k > 0 && ids[k] <= ids[k-1] {
			return false, nil
		}
		vals.size += int(rows.Spans[2*k+1] - rows.Spans[2*k])
	}
	return true, t.addIDs(ids, vals, false)
}

// takesFresh reports whether n rows can be fresh rows of the table: it is
// not broken.
// ReadByKey says that the table's rows are looked up by key (a table with
// a primary key, whose every INSERT checks its keys): the files its fresh
// rows are sealed to get bloom filters and Pebble's small blocks, not the
// scan layout of a table keyed by a hidden row id (scanWriterOptions).
// Without filters, a key check of a missing key after a bulk load took
// about twice as long, until compactions rewrote the files.
func (t *StateTable) ReadByKey() { t.keyedReads = true }

func (t *StateTable) takesFresh(n int) bool {
	return t.broken == nil && n > 0
}

// addIDs keeps rows with rising ids as one fresh chunk.
func (t *StateTable) addIDs(ids []int64, vals encodedRows, overwrite bool) error {
	hashes := codec.HashInt64s(ids, nil) // the key is one bigint
	fc := freshChunk{ids: ids, vnodes: make([]uint16, len(ids)), vals: vals, lo: ids[0], hi: ids[len(ids)-1], n: len(ids),
		overwrite: overwrite}
	for k, h := range hashes {
		fc.vnodes[k] = codec.VNodeOf(h)
	}
	return t.addFresh(fc)
}

// addFresh keeps fc as a fresh chunk.
func (t *StateTable) addFresh(fc freshChunk) error {
	t.maybePrune()
	for _, v := range fc.vnodes {
		if !t.OwnsVNode(v) {
			return fmt.Errorf("storage: table %d vnode %d: %w", t.lay.desc.ID, v, ErrVNodeNotOwned)
		}
	}
	if t.rc.on && !fc.overwrite {
		for _, v := range fc.vnodes {
			t.rc.n[v]++
			t.rc.mark(v)
		}
	}
	t.notePresealClock()
	t.fresh = append(t.fresh, fc)
	t.held().Add(int64(fc.bytes()))
	if err := t.maybePreseal(); err != nil {
		return err
	}
	return t.maybeSpill()
}

// HoldsFresh reports whether the table holds fresh rows its commit has not
// yet taken: Scan refuses it then (see ScanWithoutFresh).
func (t *StateTable) HoldsFresh() bool {
	t.maybePrune()
	return len(t.fresh) > 0
}

// HoldsNoWrites reports whether the table holds no uncommitted write
// other than fresh rows. A caller that knows a key is not stored (a view's
// insert) may then store it with InsertFresh: no overlay write of the key
// can be older than the fresh row, which is what makes fresh rows safe to
// read and seal before the overlay.
func (t *StateTable) HoldsNoWrites() bool {
	t.maybePrune()
	return t.overlay.empty()
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

// freshGet finds the row of pk, whose key is key, among the fresh rows.
func (t *StateTable) freshGet(pk types.Row, key []byte) (types.Row, bool, error) {
	if len(t.fresh) == 0 {
		return nil, false, nil
	}
	q, ok := t.freshKeyOf(pk, key)
	if !ok {
		return nil, false, nil
	}
	// Newest first: a trusted input puts a key in two chunks only if it
	// broke its word, and then the later write wins, as in the overlay
	// and in a seal into a batch.
	var looked *spillFile // the chunks of one spill are one search of it
	for i := len(t.fresh) - 1; i >= 0; i-- {
		fc := &t.fresh[i]
		if !fc.mayHold(q) || fc.spill != nil && fc.spill == looked {
			continue
		}
		looked = fc.spill
		v, found, err := t.freshValue(fc, q)
		if fc.sealed != 0 && fc.sealed <= t.store.committed.Load() && errors.Is(err, os.ErrNotExist) {
			// The commit took the sealed file after this read's prune
			// looked (the first read of a spilled row opens it): the rows
			// are in Pebble now, under any newer overlay write. Before
			// its commit a missing file is an error, never a miss.
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if found {
			row, err := t.lay.decodeValue(v)
			return row, err == nil, err
		}
	}
	return nil, false, nil
}

// freshValue returns the encoding of the row of q if fc holds it: from
// memory, or from its file by the row's key (a spilled chunk keeps no
// keys; a find there may be another chunk's row of the same file, as
// good).
func (t *StateTable) freshValue(fc *freshChunk, q freshKey) ([]byte, bool, error) {
	if fc.spill == nil {
		k, found := fc.find(q)
		if !found {
			return nil, false, nil
		}
		return fc.vals.row(k), true, nil
	}
	if fc.spill.raw {
		return fc.spill.rawGet(t.store.fs, q.vnode, q.suffix)
	}
	return fc.spill.get(t.store, q.full)
}

// hasUnsealedFresh reports whether fresh rows await a seal. Not only the
// last chunk: a loaded one (fresh_loaded.go) is born sealed.
func (t *StateTable) hasUnsealedFresh() bool {
	return slices.ContainsFunc(t.fresh, func(fc freshChunk) bool { return fc.sealed == 0 })
}

// sealFresh writes the unsealed fresh rows into b, by vnode (key order
// for a bulk load, see freshKeyOrder), and marks them sealed in epoch.
// Rows in spill files (overwrites, which never go to a file of their own:
// maybeSealFreshFile) are merged with those in memory, a key's newest row
// taken; the spills stay until the epoch commits, for reads.
func (t *StateTable) sealFresh(b *pebble.Batch, epoch uint64) error {
	todo := t.unsealedFresh()
	if len(todo) == 0 {
		return nil
	}
	for _, fc := range todo {
		fc.sealed = epoch
	}
	if spills := spillsOf(todo); spills != nil {
		var inMemory []*freshChunk
		for _, fc := range todo {
			if fc.spill == nil {
				inMemory = append(inMemory, fc)
			}
		}
		fill := t.mergeFill(spills, inMemory, freshSortedOrder(inMemory))
		return fill(func(k, v []byte) error { return b.Set(k, v, nil) })
	}
	for _, r := range freshKeyOrder(todo) {
		fc := todo[r.chunk]
		key := t.appendFreshKey(t.keyScratch[:0], fc, r.k)
		t.keyScratch = key
		if err := b.Set(key, fc.vals.row(r.k), nil); err != nil {
			return err
		}
	}
	return nil
}

// encodedRows is rows in value encoding: row k is buf[at[2k]:at[2k+1]].
// The buffer is the rows' own arena, or a DML record's payload they were
// handed in (InsertFreshEncoded); size is the bytes of the rows alone.
type encodedRows struct {
	buf  []byte
	at   []uint32
	size int
}

func (e *encodedRows) row(k int) []byte { return e.buf[e.at[2*k]:e.at[2*k+1]] }

// encodeRows encodes rows of c (the table's types) into one arena, sized
// from the first row.
func (t *StateTable) encodeRows(c *types.Chunk, rows []int) (encodedRows, error) {
	e := encodedRows{at: make([]uint32, 0, 2*len(rows))}
	enc := codec.NewRowEncoder(c.Cols)
	for k, i := range rows {
		start := len(e.buf)
		var err error
		if e.buf, err = enc.Append(e.buf, i); err != nil {
			return encodedRows{}, fmt.Errorf("storage: table %d: encode row: %w", t.lay.desc.ID, err)
		}
		if len(e.buf) > math.MaxUint32 {
			return encodedRows{}, fmt.Errorf("storage: table %d: fresh rows of 4 GiB in one chunk", t.lay.desc.ID)
		}
		if k == 0 {
			e.buf = grown(e.buf, len(e.buf)*len(rows)*9/8)
		}
		e.at = append(e.at, uint32(start), uint32(len(e.buf)))
	}
	e.size = len(e.buf)
	return e, nil
}

// freshRef is row k of the chunk-th fresh chunk being sealed.
type freshRef struct{ chunk, k int }

// freshKeyOrder returns the rows of todo bucketed by vnode (a counting
// sort), in chunk order within one: key order when ids rise across the
// chunks as within each (a bulk load). Pebble needs no order; a sorted
// batch only enters the memtable faster.
func freshKeyOrder(todo []*freshChunk) []freshRef {
	var start [codec.VNodeCount + 1]int
	for _, fc := range todo {
		for _, v := range fc.vnodes {
			start[v+1]++
		}
	}
	for v := 1; v <= codec.VNodeCount; v++ {
		start[v] += start[v-1]
	}
	order := make([]freshRef, start[codec.VNodeCount])
	next := start
	for ci, fc := range todo {
		for k, v := range fc.vnodes {
			order[next[v]] = freshRef{ci, k}
			next[v]++
		}
	}
	return order
}

// freshSealedSize estimates the bytes sealFresh adds to a batch.
func (t *StateTable) freshSealedSize() int {
	n := 0
	for _, fc := range t.fresh {
		if fc.sealed == 0 && !fc.presealed {
			n += fc.encodedBytes() + fc.n*(stateKeyHeaderLen+9+16)
		}
	}
	return n
}

// hasUnsealedSpills reports whether unsealed fresh rows are in spill files.
func (t *StateTable) hasUnsealedSpills() bool {
	for _, fc := range t.fresh {
		if fc.sealed == 0 && !fc.presealed && fc.spill != nil {
			return true
		}
	}
	return false
}

// pruneFresh drops the fresh rows of committed epochs: Pebble has them.
func (t *StateTable) pruneFresh(committed uint64) {
	n := 0
	for n < len(t.fresh) && t.fresh[n].sealed != 0 && t.fresh[n].sealed <= committed {
		n++
	}
	if n > 0 {
		for _, f := range spillsOf(t.firstFresh(n)) {
			f.close(t.store)
		}
		for i := range n {
			if t.fresh[i].spill == nil {
				t.held().Add(-int64(t.fresh[i].bytes()))
			}
		}
		t.fresh = slices.Delete(t.fresh, 0, n)
	}
}

// firstFresh returns the first n fresh chunks.
func (t *StateTable) firstFresh(n int) []*freshChunk {
	out := make([]*freshChunk, n)
	for i := range n {
		out[i] = &t.fresh[i]
	}
	return out
}

// errFreshScan refuses a scan of a table holding uncommitted fresh rows.
func (t *StateTable) errFreshScan() error {
	if len(t.fresh) == 0 {
		return nil
	}
	return fmt.Errorf("storage: table %d: a scan while fresh inserts are uncommitted (only reads by key are supported)", t.lay.desc.ID)
}
