package storage

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A bulk statement into a table keyed by its hidden row id (a COPY of a
// million rows) writes its rows twice: the statement writes them to log
// segments, and after its commit the table source reads them back, routes
// them to the table's actors, and their seal writes the sstable of final
// keys (spilling on the way). About a fifth of such a load's CPU is the
// second write's read-back and routing.
//
// A BulkLoad is the statement's half of writing them once: it builds the
// table's sstable of final keys (vnode, row id) from the statement's
// pieces, outside the table's actors, with the fresh-row machinery an
// actor's seal uses (pieces kept in memory under the store's fresh-row
// budget, the oldest spilled past it, a merge at the end), and it counts
// the rows of each vnode. Its file holds exactly the keys and values the
// actors would have sealed from the same rows. The log record naming the
// file, and the epoch that ingests it, are the next steps
// (docs/design/write-once-bulk.md).

// BulkLoad builds one table's sstable from a bulk statement's rows.
type BulkLoad struct {
	t      *StateTable
	rows   int64
	lo, hi int64
	ended  bool
	spare  [][]byte // buffers of rows spilled, for Spare
}

// LoadedFile is a finished bulk load: its sstable and what it holds.
type LoadedFile struct {
	Path string
	Rows int64
	// LoID and HiID are the smallest and largest row id; LoKey and HiKey
	// the file's smallest and largest key.
	LoID, HiID   int64
	LoKey, HiKey []byte
	// Counts is the rows of each vnode (codec.VNodeCount entries).
	Counts []int64
}

// bulkLoadOwner is the owner a bulk load's table names in its spill files'
// names. The table never seals, so it stages nothing under it.
const bulkLoadOwner ActorID = math.MaxUint32

// NewBulkLoad starts a bulk load into the table desc, which must be keyed
// and distributed by one ascending bigint: a hidden row id, whose values
// the statement assigns and no stored row has. The load checks no key
// against the table's, and its file's keys are trusted to be new: a
// user's bigint primary key must not take this path.
func (s *Store) NewBulkLoad(desc TableDesc) (*BulkLoad, error) {
	if len(desc.PK) != 1 || !slices.Equal(desc.DistKey, desc.PK) || desc.Types[desc.PK[0]] != types.TInt64 {
		return nil, fmt.Errorf("storage: table %d: a bulk load needs a table keyed and distributed by one bigint", desc.ID)
	}
	t, err := s.OpenTable(desc, bulkLoadOwner, nil)
	if err != nil {
		return nil, err
	}
	if t.idsDescend() {
		return nil, fmt.Errorf("storage: table %d: a bulk load needs an ascending key", desc.ID)
	}
	t.rc = rowCounts{on: true, n: make([]int64, codec.VNodeCount), isDir: make([]bool, codec.VNodeCount)}
	b := &BulkLoad{t: t}
	t.spilled = b.keepSpare
	t.noPreseal = true // one file at the end
	return b, nil
}

// Rows returns the rows added so far.
func (b *BulkLoad) Rows() int64 { return b.rows }

// maxSpare bounds the spilled buffers a load keeps for Spare.
const maxSpare = 1

func (b *BulkLoad) keepSpare(buf []byte) {
	if len(b.spare) < maxSpare {
		b.spare = append(b.spare, buf)
	}
}

// Spare returns an empty buffer whose rows the load added and has
// spilled since, which the caller may fill with the next rows it adds
// (a statement's piece of 64 K rows is megabytes: a new one each time is
// allocated, zeroed and faulted in); nil when there is none.
func (b *BulkLoad) Spare() []byte {
	if len(b.spare) == 0 {
		return nil
	}
	buf := b.spare[len(b.spare)-1]
	b.spare = b.spare[:len(b.spare)-1]
	return buf
}

// Add adds rows whose ids rise, each above every id added before; row k's
// value encoding is rows.Buf[rows.Spans[2k]:rows.Spans[2k+1]]. The load
// keeps rows.Buf until it spills or finishes: the caller must not reuse
// it (ids and spans it copies). An error ends the load, as Abort does.
func (b *BulkLoad) Add(ids []int64, rows EncodedRows) error {
	switch {
	case b.ended:
		return errors.New("storage: bulk load already finished")
	case len(ids) == 0:
		return nil
	case len(rows.Spans) != 2*len(ids):
		b.Abort()
		return fmt.Errorf("storage: table %d: bulk load of %d ids with %d spans", b.t.lay.desc.ID, len(ids), len(rows.Spans))
	case b.rows > 0 && ids[0] <= b.hi:
		b.Abort()
		return fmt.Errorf("storage: table %d: bulk load row id %d after %d", b.t.lay.desc.ID, ids[0], b.hi)
	}
	// The chunk is counted as soon as it is kept, before a spill that may
	// fail: the load must end then, or its counts would not be its rows.
	rows.Spans = slices.Clone(rows.Spans)
	ok, err := b.t.InsertFreshEncoded(slices.Clone(ids), b.t.lay.desc.PK[0], rows)
	if err == nil && !ok {
		err = fmt.Errorf("storage: table %d: bulk load rows whose ids do not rise", b.t.lay.desc.ID)
	}
	if err != nil {
		b.Abort()
		return err
	}
	if b.rows == 0 {
		b.lo = ids[0]
	}
	b.rows += int64(len(ids))
	b.hi = ids[len(ids)-1]
	return nil
}

// Finish writes the rows added to a new sstable at path, which must not
// exist, syncs it and its directory, and ends the load. The caller owns
// the file; on error there is none.
func (b *BulkLoad) Finish(path string) (*LoadedFile, error) {
	if b.ended {
		return nil, errors.New("storage: bulk load already finished")
	}
	if b.rows == 0 {
		b.Abort()
		return nil, fmt.Errorf("storage: table %d: bulk load of no rows", b.t.lay.desc.ID)
	}
	fs := b.t.store.fs
	if _, err := fs.Stat(path); err == nil {
		b.Abort()
		return nil, fmt.Errorf("storage: table %d: bulk load file %s exists", b.t.lay.desc.ID, path)
	}
	f, err := b.t.writeFreshFile(path, b.t.unsealedFresh())
	if err != nil {
		_ = fs.Remove(path) // it did not exist: a partial file is ours
		b.Abort()
		return nil, err
	}
	// writeFreshFile closed the spills (a raw one went back to the
	// store's pool): from here the load ends without closing them again.
	if err := syncDir(fs, fs.PathDir(path)); err != nil {
		_ = fs.Remove(path)
		b.release()
		return nil, err
	}
	out := &LoadedFile{Path: f.path, Rows: b.rows, LoID: b.lo, HiID: b.hi, LoKey: f.lo,
		HiKey: slices.Clone(f.hi), Counts: slices.Clone(b.t.rc.n)}
	b.release()
	return out, nil
}

// Abort ends the load and removes its spills; Finish after it fails.
func (b *BulkLoad) Abort() {
	if b.ended {
		return
	}
	for _, sf := range spillsOf(b.t.unsealedFresh()) {
		sf.close(b.t.store)
	}
	b.release()
}

// release forgets the rows, returning their memory to the store's
// fresh-row budget.
func (b *BulkLoad) release() {
	b.ended = true
	for i := range b.t.fresh {
		if b.t.fresh[i].spill == nil {
			b.t.held().Add(-int64(b.t.fresh[i].bytes()))
		}
	}
	b.t.fresh = nil
}
