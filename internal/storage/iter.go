package storage

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluice-db/sluice/internal/types"
)

// Iterator yields rows in key order. Next returns ok=false at the end.
// Close must be called; it is idempotent.
type Iterator interface {
	Next() (row types.Row, ok bool, err error)
	Close() error
}

// keyRange is [lo, hi) over full Pebble keys.
type keyRange struct{ lo, hi []byte }

// mergeIter walks a list of key ranges in order, merging an optional overlay
// of uncommitted writes over a Pebble reader: where both hold a key the
// overlay wins, and an overlay tombstone hides the Pebble row.
type mergeIter struct {
	lay     *layout
	ranges  []keyRange
	pit     *pebble.Iterator
	overlay overlaySource // nil for committed-only snapshots
	onClose func()
	// release, when set, gives pit back to the store's pool instead of
	// closing it (ScanKey).
	release func()

	pValid bool
	obuf   []overlayItem // buffered overlay entries of the current range
	opos   int
	oDone  bool   // the overlay has no more entries in the current range
	oLast  string // last overlay key buffered, to resume after it
	oHi    string // the current range's upper bound, once converted
	err    error
	closed bool
	keyBuf []byte // nextKey's copy of a Pebble key
	// shareRows: Next returns the overlay's own rows, uncopied (ScanKey).
	shareRows bool
}

const overlayBatch = 64

// overlaySource is what a mergeIter merges over Pebble: a StateTable's
// uncommitted writes (*overlay) or a reader's copy of a table's tail.
type overlaySource interface {
	empty() bool
	fill(dst []overlayItem, sp overlaySpan, max int) ([]overlayItem, bool)
	// fillErr reports a write fill could not read back (never, for an
	// overlay of rows; a tail value that does not decode).
	fillErr() error
}

func newMergeIter(r pebble.Reader, lay *layout, ranges []keyRange, overlay overlaySource) (*mergeIter, error) {
	pit, err := r.NewIter(nil)
	if err != nil {
		return nil, fmt.Errorf("storage: table %d: new iterator: %w", lay.desc.ID, err)
	}
	m := &mergeIter{lay: lay, ranges: ranges, pit: pit, overlay: overlay}
	m.startRange()
	return m, nil
}

// startRange positions both sides at the start of ranges[0].
func (m *mergeIter) startRange() {
	if len(m.ranges) == 0 {
		return
	}
	r := m.ranges[0]
	m.pit.SetBounds(r.lo, r.hi)
	m.pValid = m.pit.First()
	m.obuf, m.opos, m.oDone, m.oLast = m.obuf[:0], 0, m.overlay == nil, ""
	m.fillOverlay(true)
}

// fillOverlay buffers the next overlay entries of the current range. The
// overlay is read in small batches, resuming after the last key, so that
// the owner may write to the table between calls to Next.
func (m *mergeIter) fillOverlay(first bool) {
	m.obuf, m.opos = m.obuf[:0], 0
	if m.oDone {
		return
	}
	if m.overlay.empty() {
		// Nothing to merge; the common case once writes are committed, and
		// it skips converting the range's bounds to strings.
		m.oDone = true
		return
	}
	r := m.ranges[0]
	if first {
		m.oLast = string(r.lo)
		m.oHi = string(r.hi)
	}
	sp := overlaySpan{lo: m.oLast, after: !first, hi: m.oHi, hasHi: r.hi != nil}
	m.obuf, m.oDone = m.overlay.fill(m.obuf, sp, overlayBatch)
	if err := m.overlay.fillErr(); err != nil && m.err == nil {
		m.err = err
	}
	if len(m.obuf) > 0 {
		m.oLast = m.obuf[len(m.obuf)-1].key
	}
}

func (m *mergeIter) overlayHead() (overlayItem, bool) {
	if m.opos == len(m.obuf) {
		m.fillOverlay(false)
	}
	if m.opos < len(m.obuf) {
		return m.obuf[m.opos], true
	}
	return overlayItem{}, false
}

// Next returns the next live row.
func (m *mergeIter) Next() (types.Row, bool, error) {
	row, _, shared, ok, err := m.next(false)
	if shared && !m.shareRows {
		row = slices.Clone(row)
	}
	return row, ok, err
}

// nextKey is Next for a walk that deletes what it reads: the row is not
// copied (the caller must neither keep nor change it), and key is the
// row's full key: the overlay's own string, or a copy of Pebble's.
func (m *mergeIter) nextKey() (row types.Row, key string, ok bool, err error) {
	row, kb, shared, ok, err := m.next(true)
	switch {
	case !ok:
	case shared: // kb is the overlay item's key string
		key = unsafe.String(unsafe.SliceData(kb), len(kb))
	default:
		key = string(kb)
	}
	return row, key, ok, err
}

// next returns the next live row; shared says it is the overlay's own.
// With wantKey it also returns the row's full key (Pebble's copied into
// m.keyBuf, since the iterator moves on).
func (m *mergeIter) next(wantKey bool) (row types.Row, key []byte, shared, ok bool, err error) {
	for m.err == nil && !m.closed && len(m.ranges) > 0 {
		o, oOK := m.overlayHead()
		if !m.pValid && !oOK {
			if err := m.pit.Error(); err != nil {
				m.err = fmt.Errorf("storage: table %d scan: %w", m.lay.desc.ID, err)
				break
			}
			m.ranges = m.ranges[1:]
			m.startRange()
			continue
		}
		c, takePebble := 0, false
		switch {
		case m.pValid && oOK:
			c = bytes.Compare([]byte(o.key), m.pit.Key())
			takePebble = c > 0
		case m.pValid:
			takePebble = true
		}
		if takePebble {
			if wantKey {
				m.keyBuf = append(m.keyBuf[:0], m.pit.Key()...)
				key = m.keyBuf
			}
			row, err := m.lay.decodeValue(m.pit.Value())
			m.pValid = m.pit.Next()
			if err != nil {
				m.err = err
				break
			}
			return row, key, false, true, nil
		}
		// The overlay holds the next key (and shadows Pebble's if equal).
		m.opos++
		if m.pValid && c == 0 {
			m.pValid = m.pit.Next()
		}
		if o.row != nil {
			if wantKey {
				key = unsafe.Slice(unsafe.StringData(o.key), len(o.key))
			}
			return o.row, key, true, true, nil
		}
	}
	return nil, nil, false, false, m.err
}

// Close releases the Pebble iterator.
func (m *mergeIter) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	if m.onClose != nil {
		m.onClose()
	}
	if m.release != nil {
		m.release()
		return nil
	}
	if err := m.pit.Close(); err != nil {
		return fmt.Errorf("storage: table %d: close iterator: %w", m.lay.desc.ID, err)
	}
	return nil
}

// scanRanges returns the key ranges of the rows whose PK starts with
// pkPrefix: one range if the prefix covers the dist key, else one per vnode
// in vnodes.
func scanRanges(lay *layout, vnodes []uint16, pkPrefix types.Row) ([]keyRange, uint16, bool, error) {
	vnode, known := lay.vnodeOf(pkPrefix)
	if known {
		vnodes = []uint16{vnode}
	}
	ranges := make([]keyRange, 0, len(vnodes))
	for _, v := range vnodes {
		lo, err := lay.appendKey(nil, v, pkPrefix)
		if err != nil {
			return nil, 0, false, err
		}
		ranges = append(ranges, keyRange{lo: lo, hi: prefixEnd(lo)})
	}
	return ranges, vnode, known, nil
}

// Scan returns the rows whose PK starts with pkPrefix (nil or empty = all),
// merged from the overlay and committed data. If the prefix covers the
// dist key the rows come from one vnode, in PK order; otherwise every owned
// vnode is visited in vnode order, each in PK order. The table must not be
// written from another goroutine while the iterator is open (it never is:
// a StateTable has one owner); writes by the owner between Next calls are
// allowed and may or may not be seen.
func (t *StateTable) Scan(ctx context.Context, pkPrefix types.Row) (Iterator, error) {
	return t.scan(ctx, pkPrefix, true)
}

func (t *StateTable) scan(ctx context.Context, pkPrefix types.Row, refuseFresh bool) (Iterator, error) {
	ranges, err := t.prefixRanges(ctx, pkPrefix)
	if err != nil {
		return nil, err
	}
	return t.newIterFresh(ranges, refuseFresh)
}

// prefixRanges starts a scan of the rows under pkPrefix: it checks ctx and
// the table, prunes the overlay, and returns the key ranges to read.
func (t *StateTable) prefixRanges(ctx context.Context, pkPrefix types.Row) ([]keyRange, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.broken != nil {
		return nil, t.broken
	}
	t.maybePrune()
	ranges, vnode, known, err := scanRanges(t.lay, t.owned, pkPrefix)
	if err != nil {
		return nil, err
	}
	if known && !t.OwnsVNode(vnode) {
		return nil, fmt.Errorf("storage: table %d vnode %d: %w", t.lay.desc.ID, vnode, ErrVNodeNotOwned)
	}
	return ranges, nil
}

// ScanKey is Scan for a short read of the rows under one key (a join's
// candidates for a probe row), which the caller closes before its next
// read. It reads through one of the store's pooled Pebble iterators,
// re-bounded, rather than a new one: building an iterator over every
// level and file for each probe was 13 % of Nexmark q7's CPU. The rows
// of uncommitted writes it returns are the table's own, not copies (a
// copy per row was a twentieth of Nexmark q5's join, which streams each
// closed window's rows once): the caller must not change them, as it
// must not change a row it handed to InsertOwned.
func (t *StateTable) ScanKey(ctx context.Context, pkPrefix types.Row) (Iterator, error) {
	ranges, err := t.prefixRanges(ctx, pkPrefix)
	if err != nil {
		return nil, err
	}
	if err := t.errFreshScan(); err != nil {
		return nil, err
	}
	pi, err := t.store.pooledPoint()
	if err != nil {
		return nil, err
	}
	m := &mergeIter{lay: t.lay, ranges: ranges, pit: pi.it, overlay: t.overlay, shareRows: true}
	m.release = func() {
		pi.it.SetBounds(nil, nil) // point reads through it are unbounded
		t.store.points.put(pi)
	}
	t.openIters++
	m.onClose = func() { t.openIters-- }
	m.startRange()
	return m, nil
}

// ScanWithoutFresh is Scan leaving out the table's uncommitted fresh rows
// (which Scan refuses to read past): for a caller that keeps its own copy
// of them and merges it in, shadowed by the rows this returns (an
// aggregate's waiting values, agg/pending.go). A fresh row that its epoch's
// commit has already ingested may come back from both.
func (t *StateTable) ScanWithoutFresh(ctx context.Context, pkPrefix types.Row) (Iterator, error) {
	return t.scan(ctx, pkPrefix, false)
}

func (t *StateTable) newIter(ranges []keyRange) (*mergeIter, error) {
	return t.newIterFresh(ranges, true)
}

// newIterFresh is newIter, refusing a table with fresh rows only when
// refuseFresh is set.
func (t *StateTable) newIterFresh(ranges []keyRange, refuseFresh bool) (*mergeIter, error) {
	if refuseFresh {
		if err := t.errFreshScan(); err != nil {
			return nil, err
		}
	}
	m, err := newMergeIter(t.store.db, t.lay, ranges, t.overlay)
	if err != nil {
		return nil, err
	}
	t.openIters++
	m.onClose = func() { t.openIters-- }
	return m, nil
}

// ScanFrom returns up to limit rows of one vnode whose PK is after afterPK
// (nil = from the start), in PK order (limit ≤ 0 = no limit), merged from overlay and committed
// data. Backfill resumes from the last row's PK (PKOf).
func (t *StateTable) ScanFrom(ctx context.Context, vnode uint16, afterPK types.Row, limit int) ([]types.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.broken != nil {
		return nil, t.broken
	}
	if !t.OwnsVNode(vnode) {
		return nil, fmt.Errorf("storage: table %d vnode %d: %w", t.lay.desc.ID, vnode, ErrVNodeNotOwned)
	}
	t.maybePrune()
	r, err := rangeAfter(t.lay, vnode, afterPK)
	if err != nil {
		return nil, err
	}
	m, err := t.newIter([]keyRange{r})
	if err != nil {
		return nil, err
	}
	return collect(ctx, m, limit)
}

// rangeAfter returns the range of vnode's keys strictly after afterPK.
func rangeAfter(lay *layout, vnode uint16, afterPK types.Row) (keyRange, error) {
	head := appendVNodePrefix(nil, lay.desc.ID, vnode)
	r := keyRange{lo: head, hi: prefixEnd(head)}
	if afterPK == nil {
		return r, nil
	}
	if len(afterPK) != len(lay.pkTypes) {
		return r, fmt.Errorf("storage: table %d: resume pk has %d columns, want %d", lay.desc.ID, len(afterPK), len(lay.pkTypes))
	}
	k, err := lay.appendKey(nil, vnode, afterPK)
	if err != nil {
		return r, err
	}
	// k+0x00 is the smallest key greater than k.
	r.lo = append(k, 0)
	return r, nil
}

// collect drains up to limit rows from it and closes it.
func collect(ctx context.Context, it Iterator, limit int) (_ []types.Row, err error) {
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	var rows []types.Row
	for limit <= 0 || len(rows) < limit {
		if len(rows)%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row, ok, err := it.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		rows = append(rows, row)
	}
	return rows, nil
}
