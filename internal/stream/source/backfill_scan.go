package source

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// scanStep reads at most one chunk of the snapshot, across as many vnodes
// as it takes to fill it; ok reports that msg is to be returned (false when
// every vnode turned out finished or blocked for this epoch).
func (b *Backfill) scanStep(ctx context.Context) (stream.Message, bool, error) {
	// One spare row of capacity: Builder.Append hands back (and forgets)
	// a chunk when it fills, and this loop takes the chunk itself.
	bld := types.NewBuilder(b.schema, b.chunkSize+1)
	for b.cursor < len(b.owned) && bld.Len() < b.chunkSize {
		if err := ctx.Err(); err != nil {
			return stream.Message{}, false, err
		}
		v := b.owned[b.cursor]
		p := &b.vn[v]
		if p.finished || p.blocked {
			b.cursor++
			continue
		}
		if err := b.scanVNode(ctx, v, p, bld); err != nil {
			return stream.Message{}, false, err
		}
	}
	b.permit = false
	b.maybeFinish()
	c := bld.Take()
	if c == nil {
		return stream.Message{}, false, nil
	}
	return stream.ChunkMsg(c), true, nil
}

// scanVNode appends the next snapshot rows of vnode v after its position
// and before its fence, up to the builder's room, and advances the cursor
// when v has nothing more to give in this epoch.
func (b *Backfill) scanVNode(ctx context.Context, v uint16, p *vnodeProgress, bld *types.Builder) error {
	var after types.Row
	if p.pos != nil {
		var err error
		if after, err = b.keys.pkOfKey(p.pos); err != nil {
			return fmt.Errorf("source: backfill position of vnode %d: %w", v, err)
		}
	}
	limit := b.chunkSize - bld.Len()
	rows, err := b.snap.ScanFrom(ctx, b.upstream, v, after, limit)
	if err != nil {
		return fmt.Errorf("source: backfill scan of table %d vnode %d: %w", b.upstream.ID, v, err)
	}
	for _, row := range rows {
		key, err := b.keys.keyOf(nil, row)
		if err != nil {
			return fmt.Errorf("source: backfill key: %w", err)
		}
		if !p.beforeFence(key) {
			// A change to this key was dropped in this epoch: the snapshot
			// row is stale. The next epoch's snapshot has the change.
			p.blocked = true
			b.cursor++
			return nil
		}
		bld.Append(types.Insert, project(row, b.columns))
		p.pos, p.dirty = key, true
		p.scanned++
		b.scanned.Add(1)
	}
	if len(rows) < limit {
		// The vnode is exhausted in this snapshot. It is finished unless a
		// change beyond the position was dropped in this epoch (a new key
		// past the last row, say): then it waits for the next snapshot.
		if p.fence != nil {
			p.blocked = true
		} else {
			p.finished, p.dirty = true, true
		}
		b.cursor++
	}
	return nil
}

func project(row types.Row, cols []int) types.Row {
	out := make(types.Row, len(cols))
	for i, c := range cols {
		out[i] = row[c]
	}
	return out
}

// maybeFinish switches to pass-through once every owned vnode is finished.
func (b *Backfill) maybeFinish() {
	if b.done {
		return
	}
	if slices.ContainsFunc(b.owned, func(v uint16) bool { return !b.vn[v].finished }) {
		return
	}
	b.done = true
	b.finished.Store(true)
	b.closeSnap()
}
