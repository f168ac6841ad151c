package storage

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/types"
)

// A bulk statement into a table with a primary key reaches the tail as
// records of tens of thousands of plain inserts with distinct keys (a
// COPY's pieces). Through the tree, each row cost a btree insert, and
// every 64 MiB the tree was written out to a run anyway: a third of such
// a COPY's CPU. So a record of tailRunFrom plain inserts or more goes to
// a run of its own at once: its keys are sorted (when they do not rise
// already, as a load in key order's do) and written with the record's
// seq. The newest write of a key still wins by seq, so the run may hold a
// key the tree or an older run holds too.

// tailRunFrom is the fewest rows of a record written straight to a run (a
// variable so that tests can send small records there).
var tailRunFrom = 4096

// applyAsRun writes record seq, c, to a run of its own when it is
// tailRunFrom plain inserts or more with distinct keys; it reports
// whether it did. A run it cannot write leaves the record to the tree.
func (s *Store) applyAsRun(t *tail, seq uint64, c *types.Chunk) (bool, error) {
	if t.store == nil {
		return false, nil
	}
	r, err := s.buildRecordRun(t.lay, c)
	if r == nil || err != nil {
		return false, err
	}
	t.installRun(seq, r)
	return true, nil
}

// buildRecordRun writes c, when it has tailRunFrom rows or more, to a run
// whose entries carry no seq: the record's is given when the run is
// installed (installRun), so a writer can build it before its record has
// a seq, outside the log's and the tails' locks (prepareTails). An insert
// (or an update pair's new row) is an entry of its row, a delete (or a
// pair's old row) a tombstone; of a key written twice the record's last
// write is kept, as the tree keeps it. It returns nil when c does not
// qualify or the run cannot be written (the record then goes to the
// tree).
func (s *Store) buildRecordRun(lay *layout, c *types.Chunk) (*tailRun, error) {
	if c.Cardinality() < tailRunFrom || len(c.Cols) != len(lay.desc.Types) {
		return nil, nil
	}
	e, err := lay.encodeRecord(c, c.VisibleIndices())
	if err != nil {
		return nil, err
	}
	e.sort()
	r, err := s.writeTailRunOf(lay.desc.ID, len(e.order), func(add func(k []byte, te tailEntry) error) error {
		for _, j := range e.order {
			if err := add(e.key(j), tailEntry{val: e.val(j)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.logger.Warn("a bulk record goes to the tail's tree", "table", lay.desc.ID, "err", err)
		return nil, nil
	}
	return r, nil
}

// copyForRecord returns a run of r's entries for a record of its own:
// the block whose piece r holds still reads r (and its keys, as locks)
// at its own seq while the record's copy takes the log's.
func (r *tailRun) copyForRecord() *tailRun {
	c := *r
	c.seq, c.minSeq, c.maxSeq, c.shares = 0, 0, 0, r
	return &c
}

// installRun adds r, a run built of record seq alone (buildRecordRun).
func (t *tail) installRun(seq uint64, r *tailRun) {
	r.seq, r.minSeq, r.maxSeq = seq, seq, seq
	t.runs = append(slices.Clip(t.runs), r)
	t.applied = max(t.applied, seq)
	t.gen++
}

// encodedRecord is a record's keys and values, encoded into two buffers.
type encodedRecord struct {
	keys, vals []byte
	kEnd, vEnd []int // where row j's key and value end
	order      []int // rows in key order
}

func (e *encodedRecord) key(j int) []byte { return e.keys[e.start(e.kEnd, j):e.kEnd[j]] }
func (e *encodedRecord) val(j int) []byte { return e.vals[e.start(e.vEnd, j):e.vEnd[j]] }

func (e *encodedRecord) start(ends []int, j int) int {
	if j == 0 {
		return 0
	}
	return ends[j-1]
}

// encodeRecord encodes rows idx of c with the table's layout: a
// retraction's value is empty (a tombstone).
func (lay *layout) encodeRecord(c *types.Chunk, idx []int) (*encodedRecord, error) {
	e := &encodedRecord{kEnd: make([]int, len(idx)), vEnd: make([]int, len(idx))}
	var err error
	for j, i := range idx {
		row := c.Row(i)
		pk := lay.pkOf(row)
		vnode, _ := lay.vnodeOf(pk)
		if e.keys, err = lay.appendKey(e.keys, vnode, pk); err != nil {
			return nil, err
		}
		if before := len(e.vals); c.Op(i).IsInsert() {
			if e.vals, err = lay.encodeValue(e.vals, row); err != nil {
				return nil, err
			}
			if len(e.vals) == before {
				return nil, fmt.Errorf("storage: table %d: empty value encoding", lay.desc.ID)
			}
		}
		e.kEnd[j], e.vEnd[j] = len(e.keys), len(e.vals)
	}
	return e, nil
}

// sort orders the rows by key, keeping of a key written twice the later
// row only. Rows already in key order (a COPY's in key order, an UPDATE's
// pairs over a scan in key order, each key twice) are not sorted.
func (e *encodedRecord) sort() {
	e.order = make([]int, len(e.kEnd))
	ordered := true
	for j := range e.order {
		e.order[j] = j
		ordered = ordered && (j == 0 || bytes.Compare(e.key(j-1), e.key(j)) <= 0)
	}
	if !ordered {
		// Stable: a key's rows stay in record order, the last one kept.
		slices.SortStableFunc(e.order, func(a, b int) int { return bytes.Compare(e.key(a), e.key(b)) })
	}
	kept := e.order[:0]
	for j, row := range e.order {
		if j+1 < len(e.order) && bytes.Equal(e.key(row), e.key(e.order[j+1])) {
			continue
		}
		kept = append(kept, row)
	}
	e.order = kept
}
