package storage

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// ScanBelow returns the rows of the owned vnodes whose first PK column is
// below bound, vnode by vnode, each in PK order: the state a watermark
// has closed. The first PK column must be ascending; NULLs in it are
// below the bound only if it orders NULLS FIRST. Fresh rows not committed
// yet are left out (as ScanWithoutFresh does): a caller deleting closed
// state meets them in a later call, once they commit.
func (t *StateTable) ScanBelow(ctx context.Context, bound types.Datum) (Iterator, error) {
	return t.ScanBetween(ctx, nil, bound)
}

// ScanBetween is ScanBelow from lo on (inclusive; nil: from the start).
// A caller deleting closed state passes the bound it last deleted below,
// so it does not walk the tombstones of what it deleted before.
func (t *StateTable) ScanBetween(ctx context.Context, lo, bound types.Datum) (Iterator, error) {
	ranges, err := t.betweenRanges(ctx, lo, bound)
	if err != nil {
		return nil, err
	}
	return t.newIterFresh(ranges, false)
}

// DeleteBetween deletes the rows ScanBetween(lo, bound) returns, calling
// visit (when set) with each row first; visit must neither keep nor
// change the row. Each row is deleted by the key it was found under: not
// copied, its key not encoded again from it (Nexmark q5's join deletes
// every row of a closed window, 300 000 a run, and the copies, the
// re-encoded keys and the list of rows were a third of that). The keys
// are collected and deleted after the walk, so no write moves the
// unsealed writes' order under the walk.
func (t *StateTable) DeleteBetween(ctx context.Context, lo, bound types.Datum, visit func(types.Row) error) error {
	ranges, err := t.betweenRanges(ctx, lo, bound)
	if err != nil {
		return err
	}
	m, err := t.newIterFresh(ranges, false)
	if err != nil {
		return err
	}
	keys, err := walkKeys(ctx, m, visit, t.delKeys[:0])
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if err == nil && t.broken == nil {
		t.maybePrune()
		for _, k := range keys {
			t.overlay.putString(k, nil)
		}
	}
	clear(keys)
	if cap(keys) <= maxKeptDeleteKeys {
		t.delKeys = keys[:0]
	} else {
		t.delKeys = nil
	}
	if err != nil {
		return err
	}
	return t.broken
}

// maxKeptDeleteKeys is the longest list of keys DeleteBetween keeps for
// its next call, in keys.
const maxKeptDeleteKeys = 1 << 17 // 2 MiB of string headers

// walkKeys reads m to its end, calling visit with each row, and appends
// the rows' keys to keys.
func walkKeys(ctx context.Context, m *mergeIter, visit func(types.Row) error, keys []string) ([]string, error) {
	for n := 1; ; n++ {
		row, key, ok, err := m.nextKey()
		if err != nil || !ok {
			return keys, err
		}
		if visit != nil {
			if err := visit(row); err != nil {
				return keys, err
			}
		}
		keys = append(keys, key)
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return keys, err
			}
		}
	}
}

// betweenRanges returns ScanBetween's key ranges, one per owned vnode.
func (t *StateTable) betweenRanges(ctx context.Context, lo, bound types.Datum) ([]keyRange, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.broken != nil {
		return nil, t.broken
	}
	if len(t.lay.pkTypes) == 0 || t.lay.pkOrders[0].Desc {
		return nil, fmt.Errorf("storage: table %d: ScanBelow needs an ascending first key column", t.lay.desc.ID)
	}
	t.maybePrune()
	vnodes := t.owned
	if len(t.lay.distPos) == 0 {
		vnodes = []uint16{0}
	}
	ranges := make([]keyRange, 0, len(vnodes))
	for _, v := range vnodes {
		if !t.OwnsVNode(v) {
			continue
		}
		hi, err := t.lay.appendKey(nil, v, types.Row{bound})
		if err != nil {
			return nil, err
		}
		from := appendVNodePrefix(nil, t.lay.desc.ID, v)
		if lo != nil {
			if from, err = t.lay.appendKey(nil, v, types.Row{lo}); err != nil {
				return nil, err
			}
		}
		if string(from) >= string(hi) {
			continue
		}
		ranges = append(ranges, keyRange{lo: from, hi: hi})
	}
	return ranges, nil
}
