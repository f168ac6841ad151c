package storage

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2/sstable"
)

// An epoch of a bulk load brings a state table a million fresh rows, and
// keeping them in memory until the seal held the whole epoch, encoded,
// per table (a table and a passthrough view of it: a quarter of a
// gigabyte). So once the store's tables hold more than spillFrom bytes of
// them (fresh_memory.go), the table adding rows writes its oldest, in key
// order, to a spill file (a plain run of records, spill_raw.go: it is
// read once), and only sparse marks of their keys stay in memory, for
// Get to find a row (spill_index.go). The seal merges the spill files and the rows still in
// memory into the one sorted file the commit ingests: the rows are
// written twice, where the LSM wrote them three or four times.
//
// Spill files live in the ingest directory, so Open removes those of a
// table whose epoch never sealed.

// spillFile is a sorted file of fresh rows: a spill, or the sealed file
// of the rows once merged (until their commit).
type spillFile struct {
	path   string
	reader *sstable.Reader // opened by the first Get of a sealed file
	owned  bool            // removed when closed (a spill, not a sealed file)
	raw    bool            // a spill's plain records (spill_raw.go), not an sstable
	// A raw spill's length, and its file's (longer when the file held a
	// longer spill before: spill_pool.go).
	size, fileSize int64
	// marks index a raw spill sparsely (spill_index.go).
	marks []rawMark
	// opened, for a bulk load's file (AddLoaded), closes its reader once:
	// when the chunk goes, or when the table is let go without (an actor
	// torn down before the commit).
	opened *openedReader
}

// openedReader closes a reader once.
type openedReader struct {
	once sync.Once
	r    *sstable.Reader
}

func (o *openedReader) close() { o.once.Do(func() { _ = o.r.Close() }) }

// maybeSpill spills the oldest in-memory unsealed fresh rows, at least
// spillAtLeast bytes of them, once the store's tables hold more than its
// spill bound. Rows whose keys cannot be sorted stay in memory.
//
// It spills the oldest, not all of them: emptying the table's rows at
// each spill made the heap a sawtooth (a 48 MiB budget, half of it freed
// at once), and after each GC the runtime handed the freed memory back to
// the kernel, to fault it in again page by page as the next rows came: a
// fifth of a million-row load's CPU on this machine, where a minor fault
// costs 10-20 µs. Spilling a slice at a time keeps the rows near the
// budget, so the heap stays level. The slices grow with the epoch's
// spills (spillGrowth), so that a load of gigabytes makes not many more
// files for the seal to merge than spilling everything did.
func (t *StateTable) maybeSpill() error {
	s := t.store
	if s.spillFrom <= 0 || s.ingestFrom <= 0 || t.idsDescend() {
		return nil
	}
	var todo []*freshChunk
	var last *spillFile
	n, spills := 0, 0
	for i := range t.fresh {
		fc := &t.fresh[i]
		switch {
		case fc.sealed != 0 || fc.presealed:
		case fc.spill == nil:
			todo = append(todo, fc)
			n += fc.bytes()
		case fc.spill != last:
			last, spills = fc.spill, spills+1
		}
	}
	if n < min(s.spillFrom, s.spillAtLeast) || s.freshMem.total() < int64(s.spillFrom) {
		return nil
	}
	todo, n = oldestFresh(todo, s.spillAtLeast*(1+spills/spillGrowth))
	_, err := t.spill(todo, n, storedInKeyOrder(todo))
	return err
}

// spillGrowth is the spills of an epoch after which each spill takes
// spillAtLeast more: the k-th takes spillAtLeast·(1+k/spillGrowth), up to
// all the table holds.
const spillGrowth = 8

// sealSpillFrom is the fewest in-memory bytes the seal spills before
// merging them with the epoch's spills (fewer are merged from memory; a
// variable for tests).
var sealSpillFrom = 1 << 20

// spill writes the rows of todo (n bytes; stored in key order within
// every vnode when stored) to a spill file, which the chunks keep instead.
func (t *StateTable) spill(todo []*freshChunk, n int, stored bool) (*spillFile, error) {
	s := t.store
	if err := s.makeDir(s.ingestDir, &s.ingestDirMade); err != nil {
		return nil, fmt.Errorf("storage: table %d: spill fresh rows: %w", t.lay.desc.ID, err)
	}
	path := s.newIngestFile(0, t.lay.desc.ID, t.owner) + ".spill"
	var sf *spillFile
	var err error
	if stored {
		sf, err = t.writeRawSpillScattered(path, todo)
	} else {
		sf, err = t.writeRawSpill(path, todo, freshSortedOrder(todo))
	}
	if err != nil {
		return nil, fmt.Errorf("storage: table %d: spill fresh rows: %w", t.lay.desc.ID, err)
	}
	var bufs [][]byte
	for _, fc := range todo {
		if t.spilled != nil && cap(fc.vals.buf) > 0 {
			bufs = append(bufs, fc.vals.buf)
		}
		fc.spill, fc.vals, fc.keys, fc.ids, fc.vnodes = sf, encodedRows{}, encodedRows{}, nil, nil
	}
	t.held().Add(-int64(n))
	t.giveSpilled(bufs)
	return sf, nil
}

// giveSpilled hands t.spilled each distinct buffer of bufs that no
// chunk in memory still holds.
func (t *StateTable) giveSpilled(bufs [][]byte) {
	held := func(b []byte) bool {
		for i := range t.fresh {
			if c := t.fresh[i].vals.buf; cap(c) > 0 && &c[:1][0] == &b[:1][0] {
				return true
			}
		}
		return false
	}
	for i, b := range bufs {
		seen := slices.ContainsFunc(bufs[:i], func(o []byte) bool { return &o[:1][0] == &b[:1][0] })
		if !seen && !held(b) {
			t.spilled(b[:0])
		}
	}
}

// oldestFresh returns the first chunks of todo holding at least atLeast
// bytes (all of them if they hold fewer), and their bytes.
func oldestFresh(todo []*freshChunk, atLeast int) ([]*freshChunk, int) {
	n := 0
	for i, fc := range todo {
		if n += fc.bytes(); n >= atLeast {
			return todo[:i+1], n
		}
	}
	return todo, n
}

// freshRowsInOrder returns a writeSST fill adding the rows of todo in
// order.
func (t *StateTable) freshRowsInOrder(todo []*freshChunk, order []freshRef) func(add func(k, v []byte) error) error {
	return func(add func(k, v []byte) error) error {
		for _, r := range order {
			fc := todo[r.chunk]
			key := t.appendFreshKey(t.keyScratch[:0], fc, r.k)
			t.keyScratch = key
			if err := add(key, fc.vals.row(r.k)); err != nil {
				return err
			}
		}
		return nil
	}
}

// get returns the value of key in the file, reading it by a seek.
func (f *spillFile) get(s *Store, key []byte) ([]byte, bool, error) {
	if f.reader == nil {
		r, err := s.openSST(f.path)
		if err != nil {
			return nil, false, err
		}
		f.reader = r
	}
	it, err := f.reader.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		return nil, false, err
	}
	defer it.Close()
	kv := it.SeekGE(key, 0)
	if kv == nil || !bytes.Equal(kv.K.UserKey, key) {
		return nil, false, it.Error()
	}
	v, _, err := kv.Value(nil)
	return bytes.Clone(v), err == nil, err
}

// close closes the file's reader and removes a spill.
func (f *spillFile) close(s *Store) {
	switch {
	case f.opened != nil:
		f.opened.close()
		f.reader = nil
	case f.reader != nil:
		_ = f.reader.Close()
		f.reader = nil
	}
	switch {
	case f.owned && f.raw:
		s.retireSpill(pooledSpill{path: f.path, size: f.fileSize})
	case f.owned:
		_ = s.fs.Remove(f.path)
	}
}

// openSST opens an sstable of the store's filesystem for reading.
func (s *Store) openSST(path string) (*sstable.Reader, error) {
	f, err := s.fs.Open(path)
	if err != nil {
		return nil, err
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r, err := sstable.NewReader(context.Background(), readable, s.readerOpts)
	if err != nil {
		_ = readable.Close()
		return nil, err
	}
	return r, nil
}

// spills returns the distinct spill files of todo, in order.
func spillsOf(todo []*freshChunk) []*spillFile {
	var out []*spillFile
	for _, fc := range todo {
		if fc.spill != nil && (len(out) == 0 || out[len(out)-1] != fc.spill) {
			out = append(out, fc.spill)
		}
	}
	return out
}

// mergeFill returns a writeSST fill adding, in key order, the rows of the
// spill files and the in-memory rows of todo (order), oldest first: a key
// in several (an UPDATE's overwrites) is taken from the newest.
func (t *StateTable) mergeFill(spills []*spillFile, todo []*freshChunk, order []freshRef) func(add func(k, v []byte) error) error {
	return func(add func(k, v []byte) error) error {
		h := &mergeHeap{}
		defer h.close()
		for i, sf := range spills {
			src, err := t.rawSpillSource(sf)
			if err != nil {
				return err
			}
			h.push(src, i)
		}
		h.push(t.memorySource(todo, order), len(spills))
		if err := h.drain(context.Background(), add); err != nil {
			return fmt.Errorf("storage: table %d: fresh rows: %w", t.lay.desc.ID, err)
		}
		return nil
	}
}

// drain adds the sources' rows in key order, of a key only its newest
// source's (the heap orders equal keys newest first), looking at ctx every
// 4096 rows. A key below the one before is an error.
func (h *mergeHeap) drain(ctx context.Context, add func(k, v []byte) error) error {
	var last []byte
	for n := 0; h.Len() > 0; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		src := (*h)[0]
		k := src.key()
		switch c := bytes.Compare(k, last); {
		case last != nil && c < 0:
			return fmt.Errorf("key %x out of order", k)
		case last == nil || c > 0: // else an older source's row of the key
			if err := add(k, src.value()); err != nil {
				return err
			}
			last = append(last[:0], k...)
		}
		if err := src.next(); err != nil {
			return err
		}
		if src.done() {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	return nil
}

// mergeSource is one sorted input of mergeFill.
type mergeSource interface {
	key() []byte
	value() []byte
	next() error
	done() bool
	close()
}

// mergeHeap orders its sources by key, the newest (the last pushed) first
// among equal keys.
type mergeHeap []agedSource

type agedSource struct {
	mergeSource
	age int
}

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key(), h[j].key()); c != 0 {
		return c < 0
	}
	return h[i].age > h[j].age
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(agedSource)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	x.close()
	return x
}

// push adds a source that is not done yet (a done one is closed); its
// age orders it among sources holding the same key.
func (h *mergeHeap) push(src mergeSource, age int) {
	if src.done() {
		src.close()
		return
	}
	heap.Push(h, agedSource{src, age})
}

func (h *mergeHeap) close() {
	for _, src := range *h {
		src.close()
	}
	*h = nil
}

// memSource yields the in-memory rows of todo in order.
type memSource struct {
	t     *StateTable
	todo  []*freshChunk
	order []freshRef
	i     int
	k     []byte
}

func (t *StateTable) memorySource(todo []*freshChunk, order []freshRef) *memSource {
	m := &memSource{t: t, todo: todo, order: order}
	m.load()
	return m
}

func (m *memSource) load() {
	if m.i >= len(m.order) {
		m.k = nil
		return
	}
	r := m.order[m.i]
	fc := m.todo[r.chunk]
	m.k = m.t.appendFreshKey(m.k[:0], fc, r.k)
}

func (m *memSource) key() []byte { return m.k }
func (m *memSource) value() []byte {
	r := m.order[m.i]
	return m.todo[r.chunk].vals.row(r.k)
}
func (m *memSource) done() bool { return m.i >= len(m.order) }
func (m *memSource) next() error {
	m.i++
	m.load()
	return nil
}
func (m *memSource) close() {}
