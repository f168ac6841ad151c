package agg

import (
	"context"
	"fmt"
)

// Most groups a windowed aggregation loads are new (an auction's first
// bid in a window), and each load read the result table for a row that
// was not there: 9 % of Nexmark q5's CPU. While every group stored is
// also cached, a group missing from the cache is new, and needs no read.
// The groups are complete so from the first load when the result table is
// empty (a new job; a rebuilt one with state is not), and stop being
// complete for good when the cache evicts a group for room. Groups
// deleted from the table (closed windows, emptied groups) leave the cache
// with them and keep it complete.

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
	gs.cache.OnEvict(func(string, *group) { gs.complete = false })
	return nil
}
