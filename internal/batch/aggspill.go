package batch

import (
	"context"
	"errors"

	"github.com/sluice-db/sluice/internal/plan"
)

// A GROUP BY with more groups than memory aggregates in partitions
// (hybrid hash aggregation, partition.go): once its groups take half the
// query's memory limit, a row of a group not yet in memory is written to
// a partition, while rows of the groups in memory go on folding into
// them. After the input, the groups in memory are emitted, then each
// partition is aggregated the same way from its file. What one group
// keeps (string_agg's values, DISTINCT's seen arguments) is not
// partitioned and still fails with 53200 past the limit.

// errSpillRow tells add that the row went to a partition.
var errSpillRow = errors.New("batch: aggregate row to spill")

// mayPartition reports whether a new group needing n bytes should go to
// a partition.
func (g *aggregation) mayPartition(n int64) bool {
	return len(g.a.GroupKeys) > 0 && g.x.maySpill(g.depth, g.groupBytes, n)
}

// aggregatePartitions aggregates each partition file as its own input.
func (g *aggregation) aggregatePartitions(ctx context.Context, n *plan.Node, emit emitFunc) error {
	if g.spill == nil {
		return nil
	}
	return g.spill.each(ctx, g.x.size, func(feed func(emitFunc) error) error {
		sub := &aggregation{x: g.x, a: g.a, in: g.in, groups: map[string]*aggGroup{}, depth: g.depth + 1}
		if err := sub.prepare(); err != nil {
			return err
		}
		return sub.runAll(ctx, n, emit, feed)
	})
}
