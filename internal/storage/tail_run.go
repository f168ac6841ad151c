package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/RaduBerinde/btreemap"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// Tail runs: a statement that writes millions of rows into a table keyed
// by its own columns (a COPY of a million bids with a primary key) put
// every row into the tail's tree, where each one cost about 150 bytes
// until its epoch committed: 300 of the 470 MB a two-million-row COPY held.
// So once a tail's tree holds more than tailSpillBytes, its entries are
// written, in key order, to a run: an sstable of key → seq and value
// (empty for a tombstone), opened for reading and unlinked at once, so
// nothing outlives the process and a crash leaves only a file Open
// removes. The tree starts again empty.
//
// A key may then be in the tree and in several runs. The newest write wins
// by seq, not by layer (recovery's replay may apply an older record after a
// newer one); between writes of one seq (a record written out part way
// through) the tree wins, then the newer run. A prune through seq sets the tail's floor: every entry at or
// below it is in the committed state a reader's snapshot holds, so readers
// ignore such entries wherever they are, and a run goes once its newest
// entry is at or below the floor. Its file is closed when no reader's view
// refers to it any more.

// tailSpillBytes is the tree size (about) from which a tail writes its
// tree to a run; a variable so that tests can spill small tails.
var tailSpillBytes = 64 << 20

// tailEntryOverhead is about what a tree entry costs beside its key and
// value: the btree's item, its share of a node, the prune order's record.
const tailEntryOverhead = 100

// tailLayers is the part of a tail a reader copies: the tree, the runs
// and the floor.
type tailLayers struct {
	// tree maps encoded key → newest write. It is copied on write, so a
	// reader's Clone stays fixed while writers go on.
	tree *btreemap.BTreeMap[string, tailEntry]
	// runs hold the writes of trees written out, oldest first; never
	// changed in place (readers share the slice).
	runs []*tailRun
	// floor is the seq through which a commit visible to every snapshot
	// taken since holds the writes: entries at or below it are ignored.
	floor uint64
}

// clone returns a reader's fixed copy.
func (l *tailLayers) clone() tailLayers {
	return tailLayers{tree: l.tree.Clone(), runs: l.runs, floor: l.floor}
}

// empty reports whether no layer holds an entry.
func (l *tailLayers) empty() bool { return l.tree.Len() == 0 && len(l.runs) == 0 }

// get returns the newest write of key above the floor.
func (l *tailLayers) get(key []byte) (tailEntry, bool, error) {
	_, e, ok := l.tree.Get(string(key))
	ok = ok && e.seq > l.floor
	for _, r := range slices.Backward(l.runs) {
		if ok && r.maxSeq <= e.seq || r.maxSeq <= l.floor {
			continue
		}
		re, rok, err := r.get(key)
		if err != nil {
			return tailEntry{}, false, err
		}
		if rok && re.seq > l.floor && (!ok || re.seq > e.seq) {
			e, ok = re, true
		}
	}
	return e, ok, nil
}

// tailRun is one tree written out.
type tailRun struct {
	reader         *sstable.Reader
	points         *runPoints // reader's point reads (shared by copies)
	minSeq, maxSeq uint64
	// seq, when set, is every entry's seq: the run holds one record, whose
	// entries were written before it had one (buildRecordRun).
	seq         uint64
	first, last []byte // its smallest and largest key
	n           int
	// filter is a bloom filter of its keys (tailRunFilter), kept in
	// memory: a key check of a missing key, the common one, opened an
	// iterator on every run whose span held the key (an INSERT … SELECT of
	// 500 000 keys into a table whose tail held eight runs took 38 s).
	filter []byte
	// shares, when set, is the run whose reader this one reads
	// (copyForRecord): kept alive with it, as its cleanup closes the
	// reader.
	shares *tailRun
}

// tailRunFilter is the runs' filter policy: 10 bits a key (about 1 %
// false positives), Pebble's own.
const tailRunFilter = bloom.FilterPolicy(10)

// writeTailRun writes tree's entries to a new run of table.
func (s *Store) writeTailRun(table uint32, tree *btreemap.BTreeMap[string, tailEntry]) (*tailRun, error) {
	return s.writeTailRunOf(table, tree.Len(), func(add func(k []byte, e tailEntry) error) error {
		for k, e := range tree.Ascend(btreemap.Min[string](), btreemap.Max[string]()) {
			if err := add([]byte(k), e); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeTailRunOf writes the n entries each adds, in strictly increasing
// key order, to a new run of table.
func (s *Store) writeTailRunOf(table uint32, n int, each func(add func(k []byte, e tailEntry) error) error) (*tailRun, error) {
	if err := s.disk.check(64 * n); err != nil {
		return nil, err
	}
	seq := s.ingestSeq.Add(1)
	path := s.fs.PathJoin(s.ingestDir, fmt.Sprintf("tail-%d-%d.sst", table, seq))
	opts := s.writerOpts
	opts.Compression = sstable.NoCompression
	r := &tailRun{minSeq: ^uint64(0)}
	fw := tailRunFilter.NewWriter(sstable.TableFilter)
	var val []byte
	_, err := s.writeSSTFile(path, &opts, false, func(add func(k, v []byte) error) error {
		var last []byte
		err := each(func(k []byte, e tailEntry) error {
			val = binary.BigEndian.AppendUint64(val[:0], e.seq)
			val = append(val, e.val...)
			if err := add(k, val); err != nil {
				return err
			}
			fw.AddKey(k)
			r.minSeq, r.maxSeq = min(r.minSeq, e.seq), max(r.maxSeq, e.seq)
			if r.n == 0 {
				r.first = bytes.Clone(k)
			}
			last = k
			r.n++
			return nil
		})
		r.last = bytes.Clone(last)
		return err
	})
	if err != nil {
		return nil, err
	}
	reader, err := s.openSST(path)
	// Unlinked now: the open reader keeps the file, and nothing else needs it.
	err = errors.Join(err, s.fs.Remove(path))
	if err != nil {
		if reader != nil {
			_ = reader.Close()
		}
		return nil, err
	}
	r.reader, r.filter = reader, fw.Finish(nil)
	r.points = &runPoints{reader: reader}
	runtime.AddCleanup(r, func(p *runPoints) { p.close() }, r.points)
	return r, nil
}

// runPoints is a run's reader and the iterator its point reads share. A
// point read opened an iterator and read the index and data blocks anew
// (a pread each: 2.6 of 8.4 CPU s in a million-key ON CONFLICT DO NOTHING
// over a run-held half); reads in key order now find their block loaded.
// Readers that find the iterator busy open their own.
type runPoints struct {
	reader *sstable.Reader
	mu     sync.Mutex
	it     sstable.Iterator
	last   []byte // the key it was last positioned at
}

// trySeekUsingNext is Pebble's SeekGE flag (base.SeekGEFlags, an internal
// type: bit 0) that lets a seek to a key past the last one start from
// where the iterator stands, keeping its index and data blocks; without
// it every seek of a two-level sstable iterator reloads both.
const trySeekUsingNext = 1

// seek returns the run's value of key, if it holds key.
func (p *runPoints) seek(key []byte) ([]byte, bool, error) {
	if !p.mu.TryLock() {
		it, err := p.reader.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
		if err != nil {
			return nil, false, err
		}
		defer it.Close()
		return seekValue(it, key, false)
	}
	defer p.mu.Unlock()
	if p.it == nil {
		it, err := p.reader.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
		if err != nil {
			return nil, false, err
		}
		p.it = it
	}
	next := p.last != nil && bytes.Compare(key, p.last) > 0
	v, ok, err := seekValue(p.it, key, next)
	p.last = append(p.last[:0], key...)
	if err != nil {
		_ = p.it.Close()
		p.it, p.last = nil, nil
	}
	return v, ok, err
}

// seekValue returns the value of key, copied, if it finds key; next says
// that key is past the iterator's last seek.
func seekValue(it sstable.Iterator, key []byte, next bool) ([]byte, bool, error) {
	kv := seekGE(it.SeekGE, key, next)
	if kv == nil || !bytes.Equal(kv.K.UserKey, key) {
		return nil, false, it.Error()
	}
	v, _, err := kv.Value(nil)
	if err != nil {
		return nil, false, err
	}
	return bytes.Clone(v), true, nil
}

// seekGE calls seek (an iterator's SeekGE, whose flags type Pebble keeps
// internal) with trySeekUsingNext when next is set.
func seekGE[F ~uint8, KV any](seek func([]byte, F) KV, key []byte, next bool) KV {
	if next {
		return seek(key, F(trySeekUsingNext))
	}
	return seek(key, 0)
}

// close closes the iterator, then the reader (the run is garbage).
func (p *runPoints) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.it != nil {
		_ = p.it.Close()
	}
	_ = p.reader.Close()
}

// decode splits a run's value into the entry it holds.
func (r *tailRun) decode(v []byte) (tailEntry, error) {
	if len(v) < 8 {
		return tailEntry{}, fmt.Errorf("storage: tail run value of %d bytes", len(v))
	}
	e := tailEntry{seq: binary.BigEndian.Uint64(v)}
	if r.seq != 0 {
		e.seq = r.seq
	}
	if len(v) > 8 {
		e.val = bytes.Clone(v[8:])
	}
	return e, nil
}

// get returns the run's write of key.
func (r *tailRun) get(key []byte) (tailEntry, bool, error) {
	defer runtime.KeepAlive(r) // its cleanup closes the reader
	if bytes.Compare(key, r.first) < 0 || bytes.Compare(key, r.last) > 0 ||
		!tailRunFilter.MayContain(sstable.TableFilter, r.filter, key) {
		return tailEntry{}, false, nil
	}
	v, ok, err := r.points.seek(key)
	if err != nil || !ok {
		return tailEntry{}, false, err
	}
	e, err := r.decode(v)
	return e, err == nil, err
}

// tailItem is an entry met by a scan of the layers; rank orders the
// layers for a tie of seqs (the tree highest, then the newer run).
type tailItem struct {
	key  string
	e    tailEntry
	rank int
}

// scan appends to dst up to max of the run's entries in span above floor,
// in key order, and reports whether span holds no more. Entries at or
// below floor do not count: a caller resumes after the last entry it got,
// so a batch of hidden entries must not end a scan's progress.
func (r *tailRun) scan(dst []tailItem, sp overlaySpan, max int, floor uint64) ([]tailItem, bool, error) {
	defer runtime.KeepAlive(r) // its cleanup closes the reader
	var hi []byte
	if sp.hasHi {
		hi = []byte(sp.hi)
	}
	it, err := r.reader.NewIter(sstable.NoTransforms, []byte(sp.lo), hi, sstable.AssertNoBlobHandles)
	if err != nil {
		return dst, true, err
	}
	defer it.Close()
	n := 0
	for kv := it.SeekGE([]byte(sp.lo), 0); kv != nil; kv = it.Next() {
		if sp.after && string(kv.K.UserKey) == sp.lo {
			continue
		}
		if n == max {
			return dst, false, nil
		}
		v, _, err := kv.Value(nil)
		if err != nil {
			return dst, true, err
		}
		e, err := r.decode(v)
		if err != nil {
			return dst, true, err
		}
		if e.seq <= floor {
			continue
		}
		dst = append(dst, tailItem{key: string(kv.K.UserKey), e: e})
		n++
	}
	return dst, true, it.Error()
}

// scan appends to dst up to about max of the newest writes in span above
// the floor (tombstones included, each key once), in key order, and
// reports whether span holds no more.
func (l *tailLayers) scan(dst []tailItem, sp overlaySpan, max int) ([]tailItem, bool, error) {
	sc := tailScratchPool.Get().(*tailScratch)
	defer sc.release()
	all := sc.all[:0]
	defer func() { sc.all = all }()
	bound, bounded := "", false
	note := func(src []tailItem, done bool) {
		if !done && len(src) > 0 && (!bounded || src[len(src)-1].key < bound) {
			bound, bounded = src[len(src)-1].key, true
		}
	}
	lo, hi := sp.bounds()
	var parts []int // where each source's items end in all
	start := len(all)
	for k, e := range l.tree.Ascend(lo, hi) {
		if e.seq <= l.floor {
			continue // hidden, and not counted (see tailRun.scan)
		}
		if len(all)-start == max {
			note(all[start:], false)
			break
		}
		all = append(all, tailItem{key: k, e: e, rank: len(l.runs)})
	}
	parts = append(parts, len(all))
	// The runs in the order of their first keys, each read only if it
	// can hold a key of the span below the bound so far: a bulk load's
	// runs cover key ranges one after another, and reading each of them
	// at every batch made a scan of a million rows in sixteen runs take
	// four seconds.
	for _, i := range l.runsByFirst() {
		r := l.runs[i]
		if r.maxSeq <= l.floor || string(r.last) < sp.lo || sp.hasHi && string(r.first) >= sp.hi ||
			bounded && string(r.first) > bound {
			continue
		}
		start := len(all)
		var done bool
		var err error
		if all, done, err = r.scan(all, sp, max, l.floor); err != nil {
			return dst, true, err
		}
		for k := start; k < len(all); k++ {
			all[k].rank = i
		}
		parts = append(parts, len(all))
		note(all[start:], done)
	}
	// Every source is in key order; merge them, keeping for each key its
	// newest write (by seq, then rank).
	merged := mergeSorted(all, parts, sc.merged[:0])
	if len(parts) > 1 {
		sc.merged = merged // else merged is all
	}
	for i := 0; i < len(merged); {
		j, best := i+1, merged[i]
		for ; j < len(merged) && merged[j].key == best.key; j++ {
			if e := merged[j]; e.e.seq > best.e.seq || e.e.seq == best.e.seq && e.rank > best.rank {
				best = e
			}
		}
		i = j
		if bounded && best.key > bound {
			break
		}
		dst = append(dst, best)
	}
	return dst, !bounded, nil
}

// runsByFirst returns the indices of the runs in the order of their
// first keys.
func (l *tailLayers) runsByFirst() []int {
	order := make([]int, len(l.runs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(l.runs[a].first, l.runs[b].first) })
	return order
}

// spillTail writes the tail's tree to a run once it holds tailSpillBytes
// or more. A failure (a full disk) leaves the tree as it was, and the next
// try waits until it has doubled. It runs under the tails' lock, as the
// record's write that filled the tree does: about a tenth of a second for
// a full tree (BenchmarkTailApply: runs cost up to 0.3 us a row more than
// the tree alone), once per 64 MiB of a bulk statement, while every other
// table's writers and key checks wait too. (Writing a frozen tree
// outside the lock is the way out if bulk statements beside many small
// ones show it.)
func (s *Store) spillTail(t *tail) {
	if t.bytes < max(tailSpillBytes, t.spillAt) || t.tree.Len() == 0 {
		return
	}
	r, err := s.writeTailRun(t.lay.desc.ID, t.tree)
	if err != nil {
		t.spillAt = 2 * t.bytes
		s.logger.Warn("a tail stays in memory", "table", t.lay.desc.ID, "writes", t.tree.Len(), "err", err)
		return
	}
	t.runs = append(slices.Clip(t.runs), r)
	t.tree = newTailTree()
	t.order = nil // every write it named is in the run now
	t.bytes, t.spillAt = 0, 0
	t.gen++
}

// pruneRuns raises the floor to through and forgets the runs it covers;
// it reports whether the raise may hide an entry (the tail holds any).
func (t *tail) pruneRuns(through uint64) bool {
	if through <= t.floor {
		return false
	}
	t.floor = through
	if t.empty() {
		return false
	}
	t.gen++
	var keep []*tailRun
	for _, r := range t.runs {
		if r.maxSeq > through {
			keep = append(keep, r)
		}
	}
	if len(keep) != len(t.runs) {
		t.runs = keep
	}
	return true
}

// mergeSorted merges the sorted stretches of items that end at parts (a
// k-way merge: sorting the concatenation of a scan's many overlapping runs
// was a sixth of a scan over them), keys equal across stretches next to
// each other in any order.
func mergeSorted(items []tailItem, parts []int, out []tailItem) []tailItem {
	if len(parts) <= 1 {
		return items
	}
	type cursor struct{ at, end int }
	h := make([]cursor, 0, len(parts))
	start := 0
	for _, end := range parts {
		if end > start {
			h = append(h, cursor{start, end})
		}
		start = end
	}
	less := func(a, b cursor) bool { return items[a.at].key < items[b.at].key }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && less(h[c+1], h[c]) {
				c++
			}
			if !less(h[c], h[i]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	out = grown(out[:0], len(items))
	for len(h) > 0 {
		out = append(out, items[h[0].at])
		if h[0].at++; h[0].at == h[0].end {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return out
}

// tailScratch is a scan's working slices, kept between its batches: a
// batch over sixteen overlapping runs gathers 16 Ki items, and growing
// them afresh for each batch was a sixth of the scan
// (BenchmarkTailScanOverlappingRuns).
type tailScratch struct{ all, merged, items []tailItem }

var tailScratchPool = sync.Pool{New: func() any { return new(tailScratch) }}

// release clears the items (they hold keys and values) and pools s.
func (s *tailScratch) release() {
	clear(s.all)
	clear(s.merged)
	clear(s.items)
	s.all, s.merged, s.items = s.all[:0], s.merged[:0], s.items[:0]
	tailScratchPool.Put(s)
}
