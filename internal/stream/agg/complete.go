package agg

import (
	"context"
	"fmt"
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

// mayBeStored reports whether a group missing from the cache must be read
// from the table; a key read back is cached again and leaves the set.
func (gs *groups) mayBeStored(k string) bool {
	if !gs.complete {
		return true
	}
	if _, ok := gs.evicted[k]; !ok {
		return false
	}
	delete(gs.evicted, k)
	return true
}

// deleted forgets the key of a group deleted from the table (or never
// written to it): the cache and the evicted set drop it.
func (gs *groups) deleted(k string) {
	gs.cache.Delete(k)
	if g := gs.epoch[k]; g != nil {
		g.cache = false
	}
	if gs.evicted != nil {
		delete(gs.evicted, k)
	}
}
