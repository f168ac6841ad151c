package storage

import (
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/types"
)

// OwnWrites is a transaction block's uncommitted writes to one table,
// overlaid on each snapshot its statements read (Snapshot.Overlay), newest
// layer first. Applying every staged chunk again at every statement made a
// block of n single-row statements cost n² (10 000 psycopg2 INSERTs in
// one transaction took six minutes). So the overlay keeps the merge of the
// table's tail and the block's writes, adds each new chunk to it once,
// and merges again only when the tail under it changed (another writer, a
// prune after a commit): about once per barrier, not once per statement.
type OwnWrites struct {
	lay *layout
	// writes are the staged chunks (Add) and runs (AddRun), in order.
	writes []ownWrite
	// fresh are pieces of bulk statements of the block (AddFresh), read
	// from their log segments as a fresh run each.
	fresh []freshRun
	// merged is the tail below (base) with every write applied; nil until
	// the first Overlay.
	merged *tail
	base   baseOf
}

// ownWrite is one staged write: a chunk, or a run of a bulk statement's
// piece, at its seq in the overlay.
type ownWrite struct {
	seq   uint64
	chunk *types.Chunk
	run   *tailRun
}

// ownSeqBase is above every seq of the log: a block's writes are at
// ownSeqBase+1, +2, … in the order staged, so that a later one shadows an
// earlier one, in a run or the tree alike.
const ownSeqBase = 1 << 63

// baseOf identifies the tail view a merge was made over: the tail and its
// generation, and the fresh runs left after the snapshot's trim.
type baseOf struct {
	src   *tail
	gen   uint64
	fresh []freshRun
}

func (b baseOf) same(o baseOf) bool {
	return b.src == o.src && b.gen == o.gen && slices.Equal(b.fresh, o.fresh)
}

// NewOwnWrites starts a block's writes to the table desc.
func NewOwnWrites(desc TableDesc) (*OwnWrites, error) {
	lay, err := newLayout(desc)
	if err != nil {
		return nil, err
	}
	return &OwnWrites{lay: lay}, nil
}

// Add records a staged chunk (every column of the table).
func (o *OwnWrites) Add(c *types.Chunk) error {
	return o.add(ownWrite{chunk: c})
}

// AddRun records a piece of a bulk statement, c (every column: inserts of
// keys the table and the block do not hold, or an UPDATE's or DELETE's
// changes), as a run of the store's: a block's COPY of millions of rows
// into a table with a primary key, or its UPDATE of as many, is read back
// from the run, not held in memory. It returns the run's keys, which the
// block holds as row locks; nil when the piece was too small for a run
// and is kept as a chunk.
func (o *OwnWrites) AddRun(s *Store, c *types.Chunk) (*RunKeys, error) {
	r, err := s.buildRecordRun(o.lay, c)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, o.Add(c)
	}
	if err := o.add(ownWrite{run: r}); err != nil {
		return nil, err
	}
	return &RunKeys{lay: o.lay, run: r}, nil
}

// RunKeys are the keys of a block's run (AddRun); safe for concurrent
// use.
type RunKeys struct {
	lay *layout
	run *tailRun
}

// Key appends primary key pk to dst as the runs of the table hold it.
func (k *RunKeys) Key(dst []byte, pk types.Row) ([]byte, error) {
	vnode, _ := k.lay.vnodeOf(pk)
	return k.lay.appendKey(dst, vnode, pk)
}

// HasKey reports whether the run holds key (encoded by Key); its bloom
// filter answers most misses.
func (k *RunKeys) HasKey(key []byte) (bool, error) {
	_, ok, err := k.run.get(key)
	return ok, err
}

func (o *OwnWrites) add(w ownWrite) error {
	w.seq = ownSeqBase + uint64(len(o.writes)) + 1
	if w.run != nil {
		w.run.seq, w.run.minSeq, w.run.maxSeq = w.seq, w.seq, w.seq
	}
	o.writes = append(o.writes, w)
	if o.merged == nil {
		return nil
	}
	if err := o.merged.applyOwn(w); err != nil {
		o.merged = nil // merge afresh at the next Overlay
		return err
	}
	return nil
}

// applyOwn applies a block's write w to the overlay's tail t.
func (t *tail) applyOwn(w ownWrite) error {
	if w.chunk != nil {
		return t.apply(w.seq, w.chunk)
	}
	// Readers may hold t's slice of runs: append to a copy.
	t.runs = append(slices.Clip(t.runs), w.run)
	t.applied = max(t.applied, w.seq)
	t.gen++
	return nil
}

// AddFresh records a piece of a bulk statement the block wrote to log
// segment segment, its rows plain inserts of new row ids encoded as enc,
// which must not keep their bytes in memory: the block's statements read
// them from the segment, as the table's tail reads a committed piece, so
// a COPY of millions of rows in a block is not held in memory.
func (o *OwnWrites) AddFresh(s *Store, enc *EncodedRows, segment string) error {
	if enc.Buf != nil {
		return fmt.Errorf("storage: table %d: a block's piece keeps its rows in memory", o.lay.desc.ID)
	}
	seg, err := s.openSegmentRows(segment)
	if err != nil {
		return err
	}
	// A tail of its own checks the run (its row ids) and makes it.
	t := newTail(o.lay)
	if err := t.addFreshEncoded(ownSeqBase, enc, seg); err != nil {
		return err
	}
	run := t.fresh[0]
	o.fresh = append(o.fresh, run)
	if o.merged != nil {
		// Readers may hold the merged tail's slice: append to a copy.
		o.merged.fresh = append(slices.Clip(o.merged.fresh), run)
		o.merged.gen++
	}
	return nil
}

// Overlay makes o's writes the newest layer of the table in sn.
func (sn *Snapshot) Overlay(o *OwnWrites) error {
	id := o.lay.desc.ID
	v := sn.tails[id]
	var b baseOf
	if v != nil && v.err != nil {
		return v.err
	}
	if v != nil {
		b = baseOf{src: v.src, gen: v.gen, fresh: slices.Clone(v.fresh)}
	}
	if o.merged == nil || !o.base.same(b) {
		t := newTail(o.lay)
		if v != nil {
			t.tailLayers, t.fresh = v.clone(), v.fresh
		}
		for _, w := range o.writes {
			if err := t.applyOwn(w); err != nil {
				return err
			}
		}
		// A copy: the base's slice is shared with the table's tail.
		t.fresh = append(slices.Clip(t.fresh), o.fresh...)
		o.merged, o.base = t, b
	}
	if sn.tails == nil {
		sn.tails = map[uint32]*tailView{}
	}
	sn.tails[id] = &tailView{lay: o.lay, tailLayers: o.merged.clone(), fresh: o.merged.fresh}
	return nil
}
