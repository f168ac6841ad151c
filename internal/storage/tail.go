package storage

import (
	"fmt"
	"strings"
	"sync"

	"github.com/RaduBerinde/btreemap"
	"github.com/sluice-db/sluice/internal/types"
)

// A table's tail is the part of its latest state that its committed state
// does not hold yet: every DML record appended to its log (and so already
// acknowledged, or about to be) whose rows the table's streaming job has not
// committed. The committed state lags the log by up to an epoch, and by much
// more while a barrier is stuck behind another job; the tail is what lets a
// statement read a table's latest state at once anyway (read your writes,
// no lost updates), without waiting for any barrier.
//
// The tail holds, per key, the newest write (a row, or a tombstone for a
// delete) and the log seq that wrote it, applied with the same "overwrite"
// rule as the table's materialize, so committed state overlaid with the tail
// is the table after every record in the log. Records enter the tail in log
// order as they are appended (AppendDML, before the sync: see DMLWrite) and
// leave it once a committed epoch covers them (PruneTail). A reader takes a
// Pebble snapshot and copies of the tails under one lock (LatestSnapshot),
// so each tail entry it misses is in the snapshot: the prune runs only
// after the commit that covers it is visible.
type tails struct {
	mu struct {
		sync.Mutex
		tables map[uint32]*tail
	}
}

type tail struct {
	lay        *layout
	tailLayers // the tree, and the runs written out of it (tail_run.go)
	// bytes is about what the tree holds; spillAt, when above
	// tailSpillBytes, is the size its next spill waits for.
	bytes, spillAt int
	// store writes the runs; nil for a transaction's own writes, which
	// stay in memory.
	store *Store
	// broken is set when a record could not be applied (its rows could
	// not be read back): until a prune covers brokenAt, the tail is not
	// the table's latest state, and its readers fail rather than miss
	// the record's rows.
	broken   error
	brokenAt uint64
	// order lists every write in seq order, for pruning without a scan.
	order []tailWrite
	// applied is the highest seq applied.
	applied uint64
	// fresh are records of fresh row-id inserts, in seq order
	// (tail_fresh.go).
	fresh []freshRun
	// gen counts the changes to the tail, so that a transaction's view of
	// its own writes over it can be reused while it stays (ownwrites.go).
	gen uint64
}

// tailEntry holds a row in its value encoding (a tenth of the memory of
// boxed datums; a bulk COPY's rows wait here until their epoch commits),
// or nil for a tombstone.
type tailEntry struct {
	val []byte
	seq uint64
}

// tailArenaBlock is the size of the blocks a record's encoded rows are cut
// from: one allocation per block, not per row.
const tailArenaBlock = 64 << 10

type tailWrite struct {
	key string
	seq uint64
}

func (ts *tails) init() { ts.mu.tables = make(map[uint32]*tail) }

func newTail(lay *layout) *tail {
	return &tail{lay: lay, tailLayers: tailLayers{tree: newTailTree()}}
}

func newTailTree() *btreemap.BTreeMap[string, tailEntry] {
	return btreemap.New[string, tailEntry](16, strings.Compare)
}

// ApplyTail applies the rows of one DML record (seq) to the table's tail:
// inserts (and an update's new row) put the row under its key, deletes (and
// an update's old row) put a tombstone. Appenders call it through
// DMLWrite; recovery calls it for the log records a committed epoch does
// not cover yet. c carries every column of the table, hidden ones too.
// fresh says every row is a plain insert of a row id never used (a fresh
// run, tail_fresh.go).
func (s *Store) ApplyTail(desc TableDesc, seq uint64, c *types.Chunk, fresh bool) error {
	return s.ApplyTailEncoded(desc, seq, c, fresh, nil)
}

// ApplyTailEncoded is ApplyTail given c's rows encoded as well (a fresh
// run then keeps enc rather than c).
func (s *Store) ApplyTailEncoded(desc TableDesc, seq uint64, c *types.Chunk, fresh bool, enc *EncodedRows) error {
	_, err := s.applyTail(desc, seq, c, fresh, enc, "")
	return err
}

// applyTail is ApplyTailEncoded; kept reports whether the tail keeps
// enc's buffer (a fresh run), until a commit covers the record.
func (s *Store) applyTail(desc TableDesc, seq uint64, c *types.Chunk, fresh bool, enc *EncodedRows, segment string) (kept bool, err error) {
	s.tails.mu.Lock()
	defer s.tails.mu.Unlock()
	return s.applyTailLocked(desc, seq, c, fresh, enc, segment)
}

// applyTailLocked is applyTail with the tails' lock held.
func (s *Store) applyTailLocked(desc TableDesc, seq uint64, c *types.Chunk, fresh bool, enc *EncodedRows, segment string) (kept bool, err error) {
	t, err := s.tailLocked(desc)
	if err != nil {
		return false, err
	}
	if c == nil {
		// An encoded fresh record without its chunk (engine.Prepare).
		if !fresh || enc == nil {
			return false, fmt.Errorf("storage: table %d: tail write %d without rows", desc.ID, seq)
		}
		var seg *segmentRows
		if enc.Buf == nil && segment != "" {
			if seg, err = s.openSegmentRows(segment); err != nil {
				return false, err
			}
		}
		if err := t.addFreshEncoded(seq, enc, seg); err != nil {
			return false, err
		}
		return true, nil
	}
	if fresh {
		if added, kept := t.addFresh(seq, c, enc); added {
			return kept, nil
		}
	}
	if ok, err := s.applyAsRun(t, seq, c); ok || err != nil {
		return false, err
	}
	return false, t.apply(seq, c)
}

// tailLocked returns desc's tail, made if it has none yet.
func (s *Store) tailLocked(desc TableDesc) (*tail, error) {
	if t := s.tails.mu.tables[desc.ID]; t != nil {
		return t, nil
	}
	lay, err := newLayout(desc)
	if err != nil {
		return nil, err
	}
	t := newTail(lay)
	t.store = s
	s.tails.mu.tables[desc.ID] = t
	return t, nil
}

func (t *tail) apply(seq uint64, c *types.Chunk) error {
	if len(c.Cols) != len(t.lay.desc.Types) {
		return fmt.Errorf("storage: table %d: tail write of %d columns, want %d", t.lay.desc.ID, len(c.Cols), len(t.lay.desc.Types))
	}
	var key, block []byte
	for i := 0; i < c.Capacity(); i++ {
		if !c.Visible(i) {
			continue
		}
		row := c.Row(i)
		pk := t.lay.pkOf(row)
		vnode, _ := t.lay.vnodeOf(pk)
		var err error
		if key, err = t.lay.appendKey(key[:0], vnode, pk); err != nil {
			return err
		}
		e := tailEntry{seq: seq}
		if c.Op(i).IsInsert() {
			if e.val, block, err = t.encode(block, row, c.Capacity()-i); err != nil {
				return err
			}
		}
		// One descent, not a lookup and then an insert (half of a bulk
		// statement's tail writes); a newer record's write of the key, met
		// only in recovery's replay, is put back.
		k := string(key)
		_, old, replaced := t.tree.ReplaceOrInsert(k, e)
		if replaced && old.seq > seq {
			t.tree.ReplaceOrInsert(k, old)
			continue
		}
		if replaced {
			t.bytes -= len(k) + len(old.val) + tailEntryOverhead
		}
		t.order = append(t.order, tailWrite{key: k, seq: seq})
		if t.bytes += len(k) + len(e.val) + tailEntryOverhead; t.bytes >= tailSpillBytes && t.store != nil {
			t.store.spillTail(t) // within the record: a bulk statement is one
		}
	}
	t.applied = max(t.applied, seq)
	t.gen++
	return nil
}

// encode appends row's value encoding to block (a new block when it is
// full, sized for the left rows still to come, up to tailArenaBlock) and
// returns the encoding, capped so that later appends to the block never
// touch it.
func (t *tail) encode(block []byte, row types.Row, left int) (val, rest []byte, err error) {
	if cap(block)-len(block) < 256 {
		block = make([]byte, 0, min(tailArenaBlock, max(256, left*64)))
	}
	start := len(block)
	if block, err = t.lay.encodeValue(block, row); err != nil {
		return nil, block, err
	}
	if len(block) == start {
		return nil, block, fmt.Errorf("storage: table %d: empty value encoding", t.lay.desc.ID)
	}
	return block[start:len(block):len(block)], block, nil
}

// PruneTail forgets the table's tail writes with seq ≤ through: a committed
// epoch has applied every record up to through, and that commit is visible
// to every snapshot taken from now on.
//
// It forgets them pruneBatch at a time, letting the tails' lock go in
// between: every DML writer and key check of every table takes that lock,
// and pruning an epoch of 15 000 single-row INSERTs in one hold kept them
// all waiting about 12 ms a second (sluice-bench ingest's INSERT figure,
// whose p99 was twice Postgres's). A reader between two batches sees some
// of the writes still in the tail and the rest only in Pebble, which holds
// them all.
func (s *Store) PruneTail(tableID uint32, through uint64) {
	for s.pruneTailSome(tableID, through, pruneBatch) {
	}
}

// pruneBatch is the most tail writes PruneTail forgets in one hold of
// the tails' lock (a few hundred microseconds).
var pruneBatch = 512

// pruneTailSome forgets up to limit of the table's tail writes with seq
// ≤ through, oldest first, and reports whether more are left.
func (s *Store) pruneTailSome(tableID uint32, through uint64, limit int) bool {
	s.tails.mu.Lock()
	defer s.tails.mu.Unlock()
	t := s.tails.mu.tables[tableID]
	if t == nil {
		return false
	}
	t.pruneFresh(through)
	if t.broken != nil && through >= t.brokenAt {
		t.broken = nil
	}
	hid := t.pruneRuns(through)
	if hid || len(t.order) > 0 && t.order[0].seq <= through {
		// Before any write leaves: a key check that misses it in the tail
		// must read Pebble through an iterator made after this (point_iter.go).
		s.points.gen.Add(1)
	}
	if len(t.order) > 0 && t.applied <= through {
		// The commit covers every record the tail applied (a bulk
		// statement's, with none after it): forget the tree at once.
		// Deleting a million keys one by one took 0.67 of a COPY's 5.3
		// CPU s. Every key in the tree has its write in order, and readers
		// keep their clones. (The last write in order would not do: a
		// replayed record may be applied after a newer one.)
		t.tree.Clear(false)
		t.order, t.runs, t.bytes, t.spillAt = nil, nil, 0, 0
		t.gen++
		return false
	}
	n := 0
	for n < len(t.order) && n < limit && t.order[n].seq <= through {
		w := t.order[n]
		if _, e, ok := t.tree.Get(w.key); ok && e.seq <= through {
			t.tree.Delete(w.key)
			t.bytes -= len(w.key) + len(e.val) + tailEntryOverhead
		}
		n++
	}
	if n > 0 {
		t.gen++
	}
	if n == len(t.order) {
		t.order = nil // let a huge statement's buffer go
		return false
	}
	clear(t.order[:n]) // the keys, for the collector
	t.order = t.order[n:]
	return t.order[0].seq <= through
}

// breakTailLocked marks the table's tail as missing record seq (its rows
// could not be applied) until a prune covers it; the tails' lock is held.
func (s *Store) breakTailLocked(desc TableDesc, seq uint64, err error) {
	t := s.tails.mu.tables[desc.ID]
	if t == nil {
		lay, lerr := newLayout(desc)
		if lerr != nil {
			return // no reader can read the table either
		}
		t = newTail(lay)
		t.store = s
		s.tails.mu.tables[desc.ID] = t
	}
	t.broken = fmt.Errorf("storage: table %d: its latest state misses record %d until its epoch commits: %w", desc.ID, seq, err)
	t.brokenAt = max(t.brokenAt, seq)
	t.applied = max(t.applied, seq)
	t.gen++
}

// DropTail forgets a dropped table's tail.
func (s *Store) DropTail(tableID uint32) {
	s.tails.mu.Lock()
	defer s.tails.mu.Unlock()
	delete(s.tails.mu.tables, tableID)
}

// TailPending reports whether the table's tail holds anything a prune
// would forget: writes, fresh rows, or the mark of a record it misses.
func (s *Store) TailPending(tableID uint32) bool {
	s.tails.mu.Lock()
	defer s.tails.mu.Unlock()
	t := s.tails.mu.tables[tableID]
	return t != nil && (!t.empty() || len(t.fresh) > 0 || t.broken != nil)
}

// TailLen returns how many keys the table's tail holds, fresh rows
// included (tests, metrics).
func (s *Store) TailLen(tableID uint32) int {
	s.tails.mu.Lock()
	defer s.tails.mu.Unlock()
	if t := s.tails.mu.tables[tableID]; t != nil {
		n := t.tree.Len()
		for _, r := range t.runs {
			n += r.n
		}
		for _, r := range t.fresh {
			n += r.rows()
		}
		return n
	}
	return 0
}

// tailView is a reader's fixed copy of one table's tail.
type tailView struct {
	src *tail // the tail it copies, and its gen then
	gen uint64
	lay *layout
	tailLayers
	fresh []freshRun
	err   error // a value that did not decode, reported through fillErr
}

func (v *tailView) fillErr() error { return v.err }

// empty implements overlaySource; a broken tail is never empty, so that
// its scans report the error.
func (v *tailView) empty() bool { return v.err == nil && v.tailLayers.empty() }

// rowOf decodes an entry (nil for a tombstone).
func (v *tailView) rowOf(e tailEntry) (types.Row, error) {
	if e.val == nil {
		return nil, nil
	}
	return v.lay.decodeValue(e.val)
}

// fill implements overlaySource: up to max entries of span, in key order.
func (v *tailView) fill(dst []overlayItem, sp overlaySpan, max int) ([]overlayItem, bool) {
	if v.err != nil {
		return dst, true // reported by fillErr
	}
	if len(v.runs) == 0 {
		return v.fillTree(dst, sp, max)
	}
	// Each batch opens an iterator on a run or two: take more at once.
	batch := runScanBatch
	if max > batch {
		batch = max
	}
	sc := tailScratchPool.Get().(*tailScratch)
	defer sc.release()
	items, done, err := v.scan(sc.items[:0], sp, batch)
	sc.items = items
	if err != nil {
		v.err = err
		return dst, true
	}
	for _, it := range items {
		row, err := v.rowOf(it.e)
		if err != nil {
			v.err = err
			return dst, true
		}
		dst = append(dst, overlayItem{key: it.key, row: row})
	}
	return dst, done
}

// runScanBatch is the fewest entries a scan of a tail with runs reads at
// once (a variable so that tests can make it small).
var runScanBatch = 1024

// fillTree is fill when the tail has no runs.
func (v *tailView) fillTree(dst []overlayItem, sp overlaySpan, max int) ([]overlayItem, bool) {
	lo, hi := sp.bounds()
	n := 0
	for k, e := range v.tree.Ascend(lo, hi) {
		if e.seq <= v.floor {
			continue
		}
		if n == max {
			return dst, false
		}
		row, err := v.rowOf(e)
		if err != nil {
			v.err = err
			return dst, true
		}
		dst = append(dst, overlayItem{key: k, row: row})
		n++
	}
	return dst, true
}
