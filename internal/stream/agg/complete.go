package agg

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// Most groups a windowed aggregation loads are new (an auction's first
// bid in a window), and each load read the result table for a row that
// was not there: 9 % of Nexmark q5's CPU. While every stored group is
// known, a group missing from the cache is new and needs no read.
//
// The groups are complete so from the first load when the result table is
// empty (a new job; a rebuilt one with state is not). A group the cache
// evicts for room is still stored, so its key goes into the evicted set:
// a miss on such a key reads the table, any other miss is a new group.
// Groups deleted from the table (closed windows, emptied groups) leave the
// cache and the evicted set with them. An unpaced source can touch more
// groups in one epoch than the cache holds, and windows close only at
// barriers, so evictions are routine; only when the evicted set outgrows
// evictedPerCached times the cache do the groups stop being complete, for
// good.

// evictedPerCached bounds the evicted set: a key costs about a tenth of
// a cached group.
const evictedPerCached = 4

// checkComplete makes the groups complete when the result table holds no
// row; load calls it once, before its first read.
func (gs *groups) checkComplete(ctx context.Context) error {
	gs.checked = true
	it, err := gs.result.Scan(ctx, nil)
	if err != nil {
		return fmt.Errorf("agg: read groups: %w", err)
	}
	_, any, err := it.Next()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("agg: read groups: %w", err)
	}
	if any {
		return nil
	}
	gs.complete = true
	gs.evicted = make(map[string]struct{})
	return nil
}

// onEvict remembers the key of a group evicted for room while the groups
// are complete (or ends completeness when too many are). Only groups with
// a stored row are cached, so every evicted key is stored.
func (gs *groups) onEvict(k string, _ *group) {
	if !gs.complete {
		return
	}
	if len(gs.evicted) >= evictedPerCached*gs.cache.Cap() {
		gs.complete, gs.evicted = false, nil
		return
	}
	gs.evicted[k] = struct{}{}
}

// mayBeStored reports whether a group missing from the cache, of index
// key kb (nil: not made yet) and key values key, must be read from the
// table; a key read back is cached again and leaves the set.
func (gs *groups) mayBeStored(kb []byte, key types.Row) (bool, error) {
	if !gs.complete {
		return true, nil
	}
	if len(gs.evicted) == 0 {
		return false, nil
	}
	if kb == nil {
		var err error
		if kb, err = gs.rowKey(key); err != nil {
			return false, err
		}
	}
	if _, ok := gs.evicted[string(kb)]; !ok {
		return false, nil
	}
	delete(gs.evicted, string(kb))
	return true, nil
}

// deleted forgets the group of index key kb and key values key, deleted
// from the table by a scan: the cache and the evicted set drop it, and if
// it is dirty, the epoch's end does not cache it.
func (gs *groups) deleted(kb []byte, key types.Row) {
	gs.cache.Delete(string(kb))
	if gs.evicted != nil {
		delete(gs.evicted, string(kb))
	}
	var g *group
	if ik, ok := gs.intKeyOf(key); ok {
		g = gs.epochInts[ik]
	} else {
		g = gs.epoch[string(kb)]
	}
	if g != nil {
		g.cache = false
	}
}

// forgetGroup is deleted for a group at hand, whose row the flush deletes
// (or never writes). A group new this epoch was never stored, so it is in
// neither the cache nor the evicted set, and needs no index key made.
func (gs *groups) forgetGroup(g *group) error {
	g.cache = false
	if g.isNew {
		return nil
	}
	k, err := gs.indexKey(g)
	if err != nil {
		return err
	}
	gs.cache.Delete(k)
	if gs.evicted != nil {
		delete(gs.evicted, k)
	}
	return nil
}
