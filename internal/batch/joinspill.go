package batch

import (
	"context"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// A hash join whose build side passes memory joins in partitions (Grace
// hash join, partition.go): the build rows kept so far and every later
// one are written to partitions by their join key's hash, then the probe
// side is written to partitions by the same hash, and each pair of
// partitions is joined as a join of its own (partitioning again when its
// build side is still too big). Matching rows share a key, so they meet
// in one pair; a row whose key holds a NULL matches nothing and is
// emitted NULL-padded at once when its side is an outer one, or dropped.

// startSpill moves the build rows in memory to partitions.
func (h *hashJoin) startSpill(ctx context.Context) error {
	h.rSpill = newPartitionSet(h.x.spillDir, h.depth, h.rt)
	h.lSpill = newPartitionSet(h.x.spillDir, h.depth, h.lt)
	for _, r := range h.right {
		k, ok, err := h.key(r, h.j.RightKeys)
		if err != nil {
			return err
		}
		if err := h.spillRight(ctx, k, ok, r); err != nil {
			return err
		}
	}
	h.x.release(h.held)
	h.right, h.table, h.held = nil, map[string][]int{}, 0
	return nil
}

// spillRight writes a build row to its partition.
func (h *hashJoin) spillRight(ctx context.Context, k string, ok bool, r types.Row) error {
	if ok {
		return h.rSpill.add(k, r)
	}
	if t := h.j.Type; t == plan.RightJoin || t == plan.FullJoin {
		return h.emitPadded(ctx, nil, r)
	}
	return nil
}

// spillLeft writes a probe chunk's rows to their partitions.
func (h *hashJoin) spillLeft(ctx context.Context, c *types.Chunk) error {
	for i := 0; i < c.Capacity(); i++ {
		l := c.Row(i)
		k, ok, err := h.key(l, h.j.LeftKeys)
		if err != nil {
			return err
		}
		if ok {
			err = h.lSpill.add(k, l)
		} else if t := h.j.Type; t == plan.LeftJoin || t == plan.FullJoin {
			err = h.emitPadded(ctx, l, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// joinPartitions partitions the probe side, then joins each pair.
func (h *hashJoin) joinPartitions(ctx context.Context, probe func(emitFunc) error) error {
	if err := probe(h.spillLeft); err != nil {
		return err
	}
	if err := send(ctx, h.emit, h.bld.Take()); err != nil {
		return err
	}
	t := h.j.Type
	keepLeft, keepRight := t == plan.LeftJoin || t == plan.FullJoin, t == plan.RightJoin || t == plan.FullJoin
	for i := range spillPartitions {
		noL, noR := h.lSpill.empty(i), h.rSpill.empty(i)
		if (noL || noR) && !(keepLeft && !noL) && !(keepRight && !noR) {
			continue // nothing joins and nothing is padded
		}
		sub := &hashJoin{x: h.x, j: h.j, lt: h.lt, rt: h.rt, keyTypes: h.keyTypes, residual: h.residual,
			out: h.out, depth: h.depth + 1}
		err := sub.runAll(ctx, h.emit,
			func(add emitFunc) error { return h.rSpill.feed(ctx, i, h.x.size, add) },
			func(add emitFunc) error { return h.lSpill.feed(ctx, i, h.x.size, add) })
		if err != nil {
			return err
		}
	}
	return nil
}

// closeSpill removes the partition files.
func (h *hashJoin) closeSpill() {
	h.rSpill.close()
	h.lSpill.close()
}
