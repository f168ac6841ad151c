package storage

import (
	"context"
	"errors"
	"fmt"

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
	snap := s.db.NewSnapshot()
	epoch, err := readEpoch(snap)
	if err != nil {
		_ = snap.Close()
		return nil, err
	}
	return &Snapshot{snap: snap, epoch: epoch}, nil
}

// Epoch returns the committed epoch the snapshot holds.
func (sn *Snapshot) Epoch() uint64 { return sn.epoch }

// Close releases the snapshot.
func (sn *Snapshot) Close() error {
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
	return newMergeIter(sn.snap, lay, ranges, nil)
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
	m, err := newMergeIter(sn.snap, lay, []keyRange{r}, nil)
	if err != nil {
		return nil, err
	}
	return collect(ctx, m, limit)
}

// Get returns the committed row with primary key pk.
func (sn *Snapshot) Get(ctx context.Context, desc TableDesc, pk types.Row) (types.Row, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	lay, err := newLayout(desc)
	if err != nil {
		return nil, false, err
	}
	if len(pk) != len(lay.pkTypes) {
		return nil, false, fmt.Errorf("storage: table %d: pk has %d columns, want %d", desc.ID, len(pk), len(lay.pkTypes))
	}
	vnode, _ := lay.vnodeOf(pk)
	key, err := lay.appendKey(nil, vnode, pk)
	if err != nil {
		return nil, false, err
	}
	v, closer, err := sn.snap.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("storage: table %d get: %w", desc.ID, err)
	}
	defer closer.Close()
	row, err := lay.decodeValue(v)
	return row, err == nil, err
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
