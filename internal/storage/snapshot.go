package storage

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Snapshot is a read-only view of the store at one committed epoch. A batch
// query reads every table it needs through one Snapshot, so all of them
// reflect the same epoch. Close it when done: it pins Pebble data.
type Snapshot struct {
	snap  *pebble.Snapshot
	epoch uint64
	// tails, set by LatestSnapshot, are the tables' acknowledged writes
	// beyond the committed epoch (tail.go), merged over snap.
	tails map[uint32]*tailView
	// point is the iterator Get reads snap through, made by the first Get
	// and kept (readers may share a snapshot): a statement that checks
	// many keys (a COPY into a keyed table) read each through DB.Get's own
	// new iterator, which skips the last level's bloom filters.
	point struct {
		sync.Mutex
		it *pebble.Iterator
	}
}

// Snapshot returns a snapshot at the latest committed epoch. The epoch is
// read from the snapshot itself (the marker commits in the same batch as the
// data), so the label can never disagree with the contents.
func (s *Store) Snapshot() (*Snapshot, error) {
	s.mu.Lock()
	closed := s.mu.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	s.visMu.RLock()
	snap, epoch, err := s.snapshotAt()
	s.visMu.RUnlock()
	if err != nil {
		return nil, err
	}
	return &Snapshot{snap: snap, epoch: epoch}, nil
}

// snapshotAt takes a Pebble snapshot and returns the committed epoch it
// holds. Reading the epoch's marker from the snapshot cost a Get per
// statement (7 µs, a sixth of a single-row INSERT's own work), so it is
// read only when a commit may have written the marker while the snapshot
// was taken; otherwise the marker is the committed epoch, read before.
// markerWrites works as a sequence lock: unchanged and even across the
// snapshot, no commit was between its batch and becoming committed.
func (s *Store) snapshotAt() (*pebble.Snapshot, uint64, error) {
	before := s.markerWrites.Load()
	epoch := s.committed.Load()
	snap := s.db.NewSnapshot()
	if before%2 == 0 && s.markerWrites.Load() == before {
		return snap, epoch, nil
	}
	epoch, err := readEpoch(snap)
	if err != nil {
		_ = snap.Close()
		return nil, 0, err
	}
	return snap, epoch, nil
}

// LatestSnapshot returns a snapshot of every table's latest state: the
// committed state overlaid with each table's tail, so it holds every DML
// record appended before it was taken. Views in it are as of the committed
// epoch. The Pebble snapshot and the tails are taken under the tails' lock,
// so no record can be pruned from the tail without being in snap.
//
// With durable, it first waits until every record it holds is synced, so
// what a client reads can never be lost by a crash (the wait is for syncs
// already under way). A statement that reads only to write after (UPDATE)
// need not wait: its own record is synced behind the ones it read.
func (s *Store) LatestSnapshot(ctx context.Context, durable bool) (*Snapshot, error) {
	s.mu.Lock()
	closed := s.mu.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	s.visMu.RLock()
	s.tails.mu.Lock()
	snap, epoch, err := s.snapshotAt()
	if err != nil {
		s.tails.mu.Unlock()
		s.visMu.RUnlock()
		return nil, err
	}
	views := make(map[uint32]*tailView, len(s.tails.mu.tables))
	applied := make(map[uint32]uint64, len(s.tails.mu.tables))
	for id, t := range s.tails.mu.tables {
		if !t.empty() || len(t.fresh) > 0 || t.broken != nil {
			views[id] = &tailView{src: t, gen: t.gen, lay: t.lay, tailLayers: t.clone(), fresh: t.fresh, err: t.broken}
			applied[id] = t.applied
		}
	}
	s.tails.mu.Unlock()
	s.visMu.RUnlock()
	sn := &Snapshot{snap: snap, epoch: epoch, tails: views}
	if durable {
		for id, seq := range applied {
			if err := s.WaitDMLDurable(ctx, id, seq); err != nil {
				_ = sn.Close()
				return nil, err
			}
		}
	}
	return sn, nil
}

// Epoch returns the committed epoch the snapshot holds.
func (sn *Snapshot) Epoch() uint64 { return sn.epoch }

// Close releases the snapshot.
func (sn *Snapshot) Close() error {
	sn.point.Lock()
	if sn.point.it != nil {
		_ = sn.point.it.Close()
		sn.point.it = nil
	}
	sn.point.Unlock()
	if err := sn.snap.Close(); err != nil {
		return fmt.Errorf("storage: close snapshot: %w", err)
	}
	return nil
}

// ScanTable returns every row of the table, vnode by vnode, each vnode in PK
// order (globally PK-ordered when the table has no dist key).
func (sn *Snapshot) ScanTable(ctx context.Context, desc TableDesc) (Iterator, error) {
	return sn.Scan(ctx, desc, nil)
}

// Scan returns the rows whose PK starts with pkPrefix, as StateTable.Scan
// does over all vnodes, from committed data only.
func (sn *Snapshot) Scan(ctx context.Context, desc TableDesc, pkPrefix types.Row) (Iterator, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lay, err := newLayout(desc)
	if err != nil {
		return nil, err
	}
	var ranges []keyRange
	if _, known := lay.vnodeOf(pkPrefix); known || len(pkPrefix) > 0 {
		ranges, _, _, err = scanRanges(lay, allVNodes(), pkPrefix)
		if err != nil {
			return nil, err
		}
	} else {
		// The whole table is one contiguous range: no need to split it.
		p := tablePrefix(desc.ID)
		ranges = []keyRange{{lo: p, hi: prefixEnd(p)}}
	}
	m, err := newMergeIter(sn.snap, lay, ranges, sn.tailOf(desc.ID))
	if err != nil {
		return nil, err
	}
	return sn.withFresh(m, desc.ID, pkPrefix, nil, nil)
}

// tailOf returns the table's tail in the snapshot as an overlay, or nil
// (an untyped nil: mergeIter tests the interface).
func (sn *Snapshot) tailOf(id uint32) overlaySource {
	if v := sn.tails[id]; v != nil {
		return v
	}
	return nil
}

// ScanFrom returns up to limit committed rows of one vnode after afterPK
// (nil = from the start), in PK order: the resumable scan of a backfill.
func (sn *Snapshot) ScanFrom(ctx context.Context, desc TableDesc, vnode uint16, afterPK types.Row, limit int) ([]types.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lay, err := newLayout(desc)
	if err != nil {
		return nil, err
	}
	r, err := rangeAfter(lay, vnode, afterPK)
	if err != nil {
		return nil, err
	}
	m, err := newMergeIter(sn.snap, lay, []keyRange{r}, sn.tailOf(desc.ID))
	if err != nil {
		return nil, err
	}
	return collect(ctx, m, limit)
}

// Get returns the committed row with primary key pk.
func (sn *Snapshot) Get(ctx context.Context, desc TableDesc, pk types.Row) (types.Row, bool, error) {
	lay, key, err := pointKey(ctx, desc, pk)
	if err != nil {
		return nil, false, err
	}
	if v := sn.tails[desc.ID]; v != nil {
		if v.err != nil {
			return nil, false, v.err
		}
		e, ok, err := v.get(key)
		if err != nil {
			return nil, false, err
		}
		if ok {
			row, err := v.rowOf(e)
			return row, e.val != nil && err == nil, err
		}
		if row, ok, err := v.freshGet(pk); ok || err != nil {
			return row, ok, err
		}
	}
	return sn.getCommitted(lay, key)
}

// getCommitted reads key from the snapshot's committed state.
func (sn *Snapshot) getCommitted(lay *layout, key []byte) (types.Row, bool, error) {
	sn.point.Lock()
	defer sn.point.Unlock()
	if sn.point.it == nil {
		it, err := sn.snap.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return nil, false, fmt.Errorf("storage: table %d get: %w", lay.desc.ID, err)
		}
		sn.point.it = it
	}
	return seekRow(sn.point.it, lay, key)
}

// Meta returns a meta entry as of the snapshot's epoch.
func (sn *Snapshot) Meta(name string) ([]byte, bool, error) { return getMeta(sn.snap, name) }

func allVNodes() []uint16 {
	vs := make([]uint16, codec.VNodeCount)
	for i := range vs {
		vs[i] = uint16(i)
	}
	return vs
}

// Bound is one end of a range over a primary-key column.
type Bound struct {
	Value     types.Datum
	Inclusive bool
}

// ScanRange returns the rows whose primary key starts with pkPrefix and
// whose next key column lies between lo and hi (nil: unbounded), in the
// latest state when the snapshot has one. The key column must sort
// ascending. Rows of that column's NULLs may be returned when hi is nil
// (NULLs sort last); callers filter.
func (sn *Snapshot) ScanRange(ctx context.Context, desc TableDesc, pkPrefix types.Row, lo, hi *Bound) (Iterator, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lay, err := newLayout(desc)
	if err != nil {
		return nil, err
	}
	n := len(pkPrefix)
	if n >= len(lay.pkTypes) || lay.pkOrders[n].Desc {
		return nil, fmt.Errorf("storage: table %d: no ascending key column after a %d-column prefix", desc.ID, n)
	}
	vnodes := allVNodes()
	if v, known := lay.vnodeOf(pkPrefix); known {
		vnodes = []uint16{v}
	}
	ranges := make([]keyRange, 0, len(vnodes))
	for _, v := range vnodes {
		r, err := lay.boundedRange(v, pkPrefix, lo, hi)
		if err != nil {
			return nil, err
		}
		if bytes.Compare(r.lo, r.hi) < 0 {
			ranges = append(ranges, r)
		}
	}
	m, err := newMergeIter(sn.snap, lay, ranges, sn.tailOf(desc.ID))
	if err != nil {
		return nil, err
	}
	return sn.withFresh(m, desc.ID, pkPrefix, lo, hi)
}

// boundedRange is the key range of ScanRange in one vnode.
func (l *layout) boundedRange(vnode uint16, prefix types.Row, lo, hi *Bound) (keyRange, error) {
	head, err := l.appendKey(nil, vnode, prefix)
	if err != nil {
		return keyRange{}, err
	}
	r := keyRange{lo: head, hi: prefixEnd(head)}
	at := func(b *Bound) ([]byte, error) {
		return l.appendKey(nil, vnode, append(slices.Clone(prefix), b.Value))
	}
	if lo != nil {
		k, err := at(lo)
		if err != nil {
			return r, err
		}
		if r.lo = k; !lo.Inclusive {
			r.lo = prefixEnd(k) // past every key with this value
		}
	}
	if hi != nil {
		k, err := at(hi)
		if err != nil {
			return r, err
		}
		if r.hi = k; hi.Inclusive {
			r.hi = prefixEnd(k)
		}
	}
	return r, nil
}
