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
	return t.newIterFresh(ranges, false)
}
