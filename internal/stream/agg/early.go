package agg

import (
	"context"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// A windowed aggregation used to keep every group it touched in an epoch
// until the barrier's flush, closed windows too: Nexmark q5 makes 150 000
// (window, auction) groups per actor in an epoch of a 1 000 000-event
// run, and the flush dropped 140 000 of them as closed. The live heap
// grew with them to 142 MB by the run's last collection, every group on
// memory touched for the first time, the epoch's map of dirty groups
// growing to match.
//
// So a watermark on the first group key that closes dirty groups
// finishes them at once (closeEarly), as the flush would have: their
// final output goes out before the barrier (nothing downstream reads an
// epoch's output before its barrier anyway), and the groups leave the
// epoch's dirty set, so their memory is free for the next window's. Only
// groups the flush would drop qualify (closesAtFlush: no value tables, no
// EMIT ON WINDOW CLOSE); a group a later row of the epoch might still
// reach is never below the watermark.

// closeEarly finishes the dirty groups below the newest watermark (one
// that moved the first group key's), queueing their output in a.early:
// at most as many rows as the groups it frees. The walk over the dirty
// groups runs only when the watermark has passed the least key it left
// dirty last time; a group made since with a smaller key waits for the
// barrier. Groups keyed by int64 values are walked by their first keys
// in dirtyFirst, so the groups that stay are not even touched: q5's walk
// passes each group about five times (one window of its five closes per
// walk), and following each pointer to compare its key was a twentieth
// of the aggregation.
func (a *Agg) closeEarly(ctx context.Context) error {
	w := &a.win
	if w.onClose || len(a.tables) != 1 || w.cur == nil || a.flush.pending != nil {
		return nil
	}
	if w.earlyFrom != nil && types.Compare(w.cur, w.earlyFrom) <= 0 {
		return nil
	}
	gs := a.groups
	wm, byInt := gs.intKeyOf(types.Row{w.cur})
	byInt = byInt && len(gs.dirtyFirst) == len(gs.dirty)
	kept, least := 0, -1
	for n, g := range gs.dirty {
		if n%cancelEvery == cancelEvery-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var closes bool
		if byInt {
			closes = gs.dirtyFirst[n] < wm[0]
		} else {
			closes = a.closesAtFlush(g)
		}
		if !closes {
			gs.dirty[kept] = g
			if byInt {
				gs.dirtyFirst[kept] = gs.dirtyFirst[n]
				if least < 0 || gs.dirtyFirst[n] < gs.dirtyFirst[least] {
					least = kept
				}
			} else if k := g.key[0]; k != nil && (least < 0 || types.Compare(k, gs.dirty[least].key[0]) < 0) {
				least = kept
			}
			kept++
			continue
		}
		if err := a.closeGroup(ctx, g); err != nil {
			return err
		}
	}
	clear(gs.dirty[kept:])
	gs.dirty = gs.dirty[:kept]
	if byInt {
		gs.dirtyFirst = gs.dirtyFirst[:kept]
	}
	w.earlyFrom = nil
	if least >= 0 {
		w.earlyFrom = gs.dirty[least].key[0] // nil for a NULL key: walk again
	}
	if c := a.flush.builder.Take(); c != nil {
		a.early = append(a.early, c)
	}
	return nil
}

// closeGroup finishes closing group g before the barrier: its output goes
// into the flush's builder (full chunks to a.early), and g is recycled.
func (a *Agg) closeGroup(ctx context.Context, g *group) error {
	rows, err := a.finishGroup(ctx, g, a.flush.stashBuf[:0])
	if err != nil {
		return err
	}
	a.groups.undirty(g)
	bld := a.flush.builder
	if bld.Len() > 0 && bld.Len()+len(rows) > a.chunkSize { // an update pair in one chunk
		a.early = append(a.early, bld.Take())
	}
	for _, r := range rows {
		if full := a.appendOut(bld, r); full != nil {
			a.early = append(a.early, full)
		}
	}
	clear(rows) // they refer to g, which is reused
	a.groups.recycle(g)
	return nil
}

// nextEarly returns the next chunk closeEarly queued.
func (a *Agg) nextEarly() stream.Message {
	c := a.early[0]
	a.early[0] = nil
	a.early = a.early[1:]
	return stream.ChunkMsg(c)
}

// undirty takes a group finished before the barrier out of the epoch's
// dirty set, as endEpoch does for the rest (the caller drops it from the
// dirty list).
func (gs *groups) undirty(g *group) {
	if g.intKey {
		delete(gs.epochInts, g.ik)
	} else {
		delete(gs.epoch, g.k)
	}
	g.dirty, g.isNew, g.pend, g.cache = false, false, nil, false
}
