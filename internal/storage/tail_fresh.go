package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// Fresh runs: a record of plain inserts into a table keyed by a hidden row
// id (the bulk of any load: COPY, INSERT … SELECT) has keys no row ever
// had, handed out consecutively. Such a record enters the tail as one run —
// its chunk and its first row id — instead of one tree entry per row: no
// per-row work at write time, and the rows stay in their column vectors.
//
// A reader emits a run's rows after the merge of committed state and tree,
// skipping each row whose key the tree holds (a later update or delete of
// it: a run and every later write to its keys are pruned together, so a
// view that has the run has those writes too). A committed epoch may
// already hold a prefix of a run before the prune forgets it; the engine,
// which knows the table's committed position, trims that prefix from the
// view (Snapshot.TrimFresh), so no row is read twice.

type freshRun struct {
	seq   uint64
	first int64        // row id of the run's row 0
	c     *types.Chunk // every column, compact, plain inserts; or
	enc   *EncodedRows // the same rows encoded (the record's payload),
	seg   *segmentRows // with Buf nil when they are in a segment only
	from  int          // rows before from are committed (a view's trim)
}

// segmentRows is the segment holding a run's payload: a bulk COPY's piece
// is not kept in memory at all, and a reader of the table's latest state
// reads it back (the whole segment once per scan, a row's bytes per Get).
// The file is opened when the run enters the tail and closed when nothing
// refers to the run any more (a cleanup), so a reader whose view of the
// tail outlives the run's prune, and the log's truncation that removes the
// segment, still reads it.
type segmentRows struct {
	f    vfs.File
	size int64
}

// openSegmentRows opens segment name for a run.
func (s *Store) openSegmentRows(name string) (*segmentRows, error) {
	f, err := s.fs.Open(s.fs.PathJoin(s.segmentDir, name))
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	seg := &segmentRows{f: f, size: st.Size()}
	runtime.AddCleanup(seg, func(f vfs.File) { _ = f.Close() }, f)
	return seg, nil
}

// read returns bytes [lo, hi) of the segment.
func (g *segmentRows) read(lo, hi int64) ([]byte, error) {
	buf := make([]byte, hi-lo)
	if _, err := g.f.ReadAt(buf, lo); err != nil {
		return nil, err
	}
	return buf, nil
}

// EncodedRows is rows in value encoding inside a shared buffer, a DML
// record's payload: row i is Buf[Spans[2i]:Spans[2i+1]]. A fresh run kept
// so costs the payload the log writes anyway and eight bytes a row,
// where the decoded chunk of a bulk COPY was twice the payload.
//
// Rows in a segment only (Buf nil: a bulk statement's piece) need not keep
// eight bytes a row while the statement goes on and until its epoch
// commits (75 MB for ten million rows): Sparse keeps the span of every
// Every-th row alone, and the rows between are found by the DML payload's
// framing, each row's value preceded by its op (one byte) and its length
// (a uvarint) and followed by the next row.
type EncodedRows struct {
	Buf   []byte
	Spans []uint32
	// Rows and Every are set by Sparse.
	Rows, Every int
}

// Len returns how many rows e holds.
func (e *EncodedRows) Len() int {
	if e.Every > 0 {
		return e.Rows
	}
	return len(e.Spans) / 2
}

// Sparse keeps the spans of rows 0, every, 2·every, … alone.
func (e *EncodedRows) Sparse(every int) {
	if e.Every > 0 || every <= 1 {
		return
	}
	n := len(e.Spans) / 2
	marks := make([]uint32, 0, 2*((n+every-1)/every))
	for i := 0; i < n; i += every {
		marks = append(marks, e.Spans[2*i], e.Spans[2*i+1])
	}
	e.Spans, e.Rows, e.Every = marks, n, every
}

// nextSpan returns the span of the row after the one ending at hi, read
// from b, which holds the payload's bytes from base on, that row's value
// included.
func nextSpan(b []byte, base, hi uint32) (uint32, uint32, error) {
	lo, next, err := frame(b[min(int(hi-base), len(b)):], hi)
	if err == nil && int(next-base) > len(b) {
		err = errFreshRowBytes
	}
	return lo, next, err
}

// frame reads the framing at the head of b, the bytes from at on (an op
// byte and a uvarint length), and returns the span of the value it
// frames.
func frame(b []byte, at uint32) (uint32, uint32, error) {
	if len(b) < 2 {
		return 0, 0, errFreshRowBytes
	}
	n, w := binary.Uvarint(b[1:])
	if w <= 0 || n > math.MaxUint32 {
		return 0, 0, errFreshRowBytes
	}
	lo := at + 1 + uint32(w)
	return lo, lo + uint32(n), nil
}

var errFreshRowBytes = errors.New("storage: a fresh run's row framing does not fit its segment")

// rows returns how many rows the run holds.
func (r *freshRun) rows() int {
	if r.enc != nil {
		return r.enc.Len()
	}
	return r.c.Capacity()
}

// row returns row i, decoded with lay; buf, when not nil, caches a
// segment's bytes across calls for the same run (and where the last row
// read lies, so that a scan of a sparse run walks it once).
func (r *freshRun) row(lay *layout, i int, buf *segmentBuf) (types.Row, error) {
	if r.enc == nil {
		return r.c.Row(i), nil
	}
	if r.seg == nil {
		lo, hi := r.enc.Spans[2*i], r.enc.Spans[2*i+1]
		return lay.decodeValue(r.enc.Buf[lo:hi])
	}
	if buf != nil {
		if buf.run != r {
			b, err := r.seg.read(0, r.seg.size)
			if err != nil {
				return nil, err
			}
			buf.run, buf.b, buf.i = r, b, -1
		}
		lo, hi, err := r.spanIn(buf, i)
		if err != nil {
			return nil, err
		}
		return lay.decodeValue(buf.b[lo:hi])
	}
	v, err := r.segmentRow(i)
	if err != nil {
		return nil, err
	}
	return lay.decodeValue(v)
}

// spanIn returns row i's span in buf, which holds the whole segment.
func (r *freshRun) spanIn(buf *segmentBuf, i int) (uint32, uint32, error) {
	e := r.enc
	if e.Every == 0 {
		return e.Spans[2*i], e.Spans[2*i+1], nil
	}
	j, lo, hi := i/e.Every*e.Every, e.Spans[2*(i/e.Every)], e.Spans[2*(i/e.Every)+1]
	if buf.i >= j && buf.i <= i {
		j, lo, hi = buf.i, buf.lo, buf.hi
	}
	for ; j < i; j++ {
		var err error
		if lo, hi, err = nextSpan(buf.b, 0, hi); err != nil {
			return 0, 0, err
		}
	}
	buf.i, buf.lo, buf.hi = i, lo, hi
	return lo, hi, nil
}

// segmentRow reads row i's bytes from the segment: its own span, or, in a
// sparse run, the rows from the mark before it on are walked (in one read
// of the stretch up to the next mark when that is small, else a row's
// framing at a time, so that wide rows are not read whole).
func (r *freshRun) segmentRow(i int) ([]byte, error) {
	e := r.enc
	if e.Every == 0 {
		return r.seg.read(int64(e.Spans[2*i]), int64(e.Spans[2*i+1]))
	}
	k := i / e.Every
	lo, hi := e.Spans[2*k], e.Spans[2*k+1]
	end := r.seg.size
	if 2*k+2 < len(e.Spans) {
		end = int64(e.Spans[2*k+2])
	}
	var b []byte
	base := hi
	if i > k*e.Every && end-int64(hi) <= segmentStretch {
		var err error
		if b, err = r.seg.read(int64(hi), end); err != nil {
			return nil, err
		}
	}
	for range i - k*e.Every {
		var err error
		if b == nil {
			lo, hi, err = r.seg.nextSpan(hi, end)
		} else {
			lo, hi, err = nextSpan(b, base, hi)
		}
		if err != nil {
			return nil, err
		}
	}
	if b != nil {
		return b[lo-base : hi-base], nil
	}
	return r.seg.read(int64(lo), int64(hi))
}

// segmentStretch is the most segmentRow reads at once to walk a sparse
// run's rows.
const segmentStretch = 64 << 10

// nextSpan reads the framing of the row after the one ending at hi and
// returns the row's span, which must end by end.
func (g *segmentRows) nextSpan(hi uint32, end int64) (uint32, uint32, error) {
	b, err := g.read(int64(hi), min(int64(hi)+1+binary.MaxVarintLen64, end))
	if err != nil {
		return 0, 0, err
	}
	lo, next, err := frame(b, hi)
	if err == nil && int64(next) > end {
		err = errFreshRowBytes
	}
	return lo, next, err
}

// segmentBuf holds the bytes of one run's segment while an iterator
// reads the run, and the span of the row it read last (i, or -1).
type segmentBuf struct {
	run    *freshRun
	b      []byte
	i      int
	lo, hi uint32
}

// freshKeys reports whether c can be a fresh run of a table keyed by one
// int64 column: compact, plain inserts, keys first, first+1, … .
func (t *tail) freshKeys(c *types.Chunk) (int64, bool) {
	if len(t.lay.desc.PK) != 1 || t.lay.pkTypes[0].ID != types.Int64 || c.HasVisibility() || c.Capacity() == 0 {
		return 0, false
	}
	ids, ok := c.Cols[t.lay.desc.PK[0]].(*types.Vec[int64])
	if !ok || ids.Nulls.Any() {
		return 0, false
	}
	for i, op := range c.Ops {
		if op != types.Insert || ids.Vals[i] != ids.Vals[0]+int64(i) {
			return 0, false
		}
	}
	return ids.Vals[0], true
}

// addFresh appends c as a run, kept as enc when that is given (c's rows
// encoded); added is false if c does not qualify, kept whether the run
// holds enc.
func (t *tail) addFresh(seq uint64, c *types.Chunk, enc *EncodedRows) (added, kept bool) {
	first, ok := t.freshKeys(c)
	if !ok {
		return false, false
	}
	run := freshRun{seq: seq, first: first, c: c}
	if enc != nil && len(enc.Spans) == 2*c.Capacity() {
		run.c, run.enc = nil, enc
	}
	t.fresh = append(t.fresh, run)
	t.applied = max(t.applied, seq)
	t.gen++
	return true, run.enc != nil
}

// addFreshEncoded appends enc as a run: rows whose chunk the writer did
// not keep. Their row ids must run from the first row's up, one by one;
// the first and last rows' ids are checked.
func (t *tail) addFreshEncoded(seq uint64, enc *EncodedRows, seg *segmentRows) error {
	n := enc.Len()
	if n == 0 || len(t.lay.desc.PK) != 1 || t.lay.pkTypes[0].ID != types.Int64 || enc.Buf == nil && seg == nil {
		return fmt.Errorf("storage: table %d: an encoded fresh run needs rows, their bytes and a bigint key", t.lay.desc.ID)
	}
	run := freshRun{seq: seq, enc: enc, seg: seg}
	idOf := func(i int) (int64, error) {
		row, err := run.row(t.lay, i, nil)
		if err != nil {
			return 0, err
		}
		id, ok := row[t.lay.desc.PK[0]].(int64)
		if !ok {
			return 0, fmt.Errorf("storage: table %d: fresh row without a row id", t.lay.desc.ID)
		}
		return id, nil
	}
	first, err := idOf(0)
	if err != nil {
		return err
	}
	if last, err := idOf(n - 1); err != nil || last != first+int64(n-1) {
		return fmt.Errorf("storage: table %d: fresh row ids %d..%d for %d rows (%v)", t.lay.desc.ID, first, last, n, err)
	}
	run.first = first
	t.fresh = append(t.fresh, run)
	t.applied = max(t.applied, seq)
	t.gen++
	return nil
}

// pruneFresh forgets the runs with seq ≤ through. It makes a new slice:
// readers hold the old one.
func (t *tail) pruneFresh(through uint64) {
	n := 0
	for n < len(t.fresh) && t.fresh[n].seq <= through {
		n++
	}
	if n > 0 {
		t.fresh = slices.Clone(t.fresh[n:])
		t.gen++
	}
}

// TrimFresh drops from the snapshot's view of table id the fresh rows a
// committed epoch holds: every run of a record with seq ≤ through, and the
// first partial rows of record through+1 (cut by a barrier).
func (sn *Snapshot) TrimFresh(id uint32, through uint64, partial int) {
	v := sn.tails[id]
	if v == nil || len(v.fresh) == 0 {
		return
	}
	var keep []freshRun
	for _, r := range v.fresh {
		switch {
		case r.seq <= through:
			continue
		case r.seq == through+1:
			r.from = min(max(r.from, partial), r.rows())
		}
		keep = append(keep, r)
	}
	v.fresh = keep
}

// FreshTables lists the tables whose view holds fresh runs: the engine
// trims them (TrimFresh) before the snapshot is read.
func (sn *Snapshot) FreshTables() []uint32 {
	var ids []uint32
	for id, v := range sn.tails {
		if len(v.fresh) > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// freshGet finds key pk (one int64) in the view's runs.
func (v *tailView) freshGet(pk types.Row) (types.Row, bool, error) {
	id, ok := pk[0].(int64)
	if !ok {
		return nil, false, nil
	}
	for k := range v.fresh {
		r := &v.fresh[k]
		if i := id - r.first; i >= int64(r.from) && i < int64(r.rows()) {
			row, err := r.row(v.lay, int(i), nil)
			return row, err == nil, err
		}
	}
	return nil, false, nil
}

// freshIter yields the view's fresh rows whose key passes keep and which
// the tree does not shadow, after the rows of base.
type freshIter struct {
	base   Iterator
	v      *tailView
	keep   func(id int64) bool
	run, i int
	key    []byte
	err    error
	seg    segmentBuf // the current run's segment, when it has one
}

// withFresh follows base with the fresh rows of table id within the
// prefix or range of the scan (a table with fresh runs is keyed by its row
// id alone).
func (sn *Snapshot) withFresh(base Iterator, id uint32, pkPrefix types.Row, lo, hi *Bound) (Iterator, error) {
	v := sn.tails[id]
	if v == nil || len(v.fresh) == 0 {
		return base, nil
	}
	keep, err := freshFilter(pkPrefix, lo, hi)
	if err != nil {
		_ = base.Close()
		return nil, err
	}
	return &freshIter{base: base, v: v, keep: keep}, nil
}

func (f *freshIter) Next() (types.Row, bool, error) {
	if f.base != nil {
		row, ok, err := f.base.Next()
		if ok || err != nil {
			return row, ok, err
		}
		if err := f.base.Close(); err != nil {
			return nil, false, err
		}
		f.base = nil
	}
	for f.err == nil && f.run < len(f.v.fresh) {
		r := f.v.fresh[f.run]
		if f.i < r.from {
			f.i = r.from
		}
		if f.i >= r.rows() {
			f.run, f.i = f.run+1, 0
			continue
		}
		i := f.i
		f.i++
		id := r.first + int64(i)
		if f.keep != nil && !f.keep(id) || f.shadowed(id) {
			continue
		}
		row, err := f.v.fresh[f.run].row(f.v.lay, i, &f.seg)
		if err != nil {
			return nil, false, err
		}
		return row, true, nil
	}
	return nil, false, f.err
}

// shadowed reports whether the tree holds a later write of row id.
func (f *freshIter) shadowed(id int64) bool {
	if f.v.empty() {
		return false
	}
	lay := f.v.lay
	pk := types.Row{id}
	vnode, _ := lay.vnodeOf(pk)
	var err error
	if f.key, err = lay.appendKey(f.key[:0], vnode, pk); err != nil {
		f.err = err
		return true
	}
	_, ok, err := f.v.get(f.key)
	if err != nil {
		f.err = err
		return true
	}
	return ok
}

func (f *freshIter) Close() error {
	if f.base != nil {
		err := f.base.Close()
		f.base = nil
		return err
	}
	return nil
}

// freshFilter returns the keep function of a prefix (nil: all) or range
// scan over a row-id key.
func freshFilter(pkPrefix types.Row, lo, hi *Bound) (func(int64) bool, error) {
	if len(pkPrefix) == 0 && lo == nil && hi == nil {
		return nil, nil
	}
	get := func(d types.Datum) (int64, error) {
		x, ok := d.(int64)
		if !ok {
			return 0, fmt.Errorf("storage: row id bound %v is not a bigint", d)
		}
		return x, nil
	}
	if len(pkPrefix) > 0 {
		want, err := get(pkPrefix[0])
		return func(id int64) bool { return id == want }, err
	}
	keep := func(int64) bool { return true }
	if lo != nil {
		x, err := get(lo.Value)
		if err != nil {
			return nil, err
		}
		prev, inc := keep, lo.Inclusive
		keep = func(id int64) bool { return prev(id) && (id > x || inc && id == x) }
	}
	if hi != nil {
		x, err := get(hi.Value)
		if err != nil {
			return nil, err
		}
		prev, inc := keep, hi.Inclusive
		keep = func(id int64) bool { return prev(id) && (id < x || inc && id == x) }
	}
	return keep, nil
}
