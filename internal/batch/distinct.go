package batch

import (
	"context"

	"github.com/sluice-db/sluice/internal/types"
)

// dedup is one DISTINCT run: the keys seen, and past memory the
// partitions of rows whose keys are not among them (partition.go). A row
// of a key seen is dropped, a row of a new key is emitted and its key
// kept, or, once the keys take half the query's memory, written to a
// partition; each partition is then deduplicated as an input of its own.
// A key's rows all go to one place, so each key is emitted once.
type dedup struct {
	x       *executor
	keys    []int
	in, out []types.Type
	depth   int

	seen  map[string]bool
	held  int64
	spill *partitionSet
}

// runAll deduplicates the rows feed gives, then any partitions.
func (d *dedup) runAll(ctx context.Context, emit emitFunc, feed func(emitFunc) error) error {
	defer func() { d.spill.close() }()
	d.seen = map[string]bool{}
	bld := types.NewBuilder(d.out, d.x.size)
	err := feed(func(ctx context.Context, c *types.Chunk) error {
		for i := 0; i < c.Capacity(); i++ {
			r, err := d.admit(c.Row(i))
			if err != nil {
				return err
			}
			if r != nil {
				if err := send(ctx, emit, bld.Append(types.Insert, r)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil {
		err = send(ctx, emit, bld.Take())
	}
	d.x.release(d.held)
	d.seen, d.held = nil, 0
	if err != nil || d.spill == nil {
		return err
	}
	return d.spill.each(ctx, d.x.size, func(feed func(emitFunc) error) error {
		sub := &dedup{x: d.x, keys: d.keys, in: d.in, out: d.out, depth: d.depth + 1}
		return sub.runAll(ctx, emit, feed)
	})
}

// admit returns r's projection when its key is new here, nil when it was
// seen or went to a partition.
func (d *dedup) admit(r types.Row) (types.Row, error) {
	k, err := keyOf(r, d.keys, d.in)
	if err != nil || d.seen[k] {
		return nil, err
	}
	n := int64(len(k)) + 32
	if d.x.maySpill(d.depth, d.held, n) {
		if d.spill == nil {
			d.spill = newPartitionSet(d.x.spillDir, d.depth, d.in)
		}
		return nil, d.spill.add(k, r)
	}
	if err := d.x.keep(n); err != nil {
		return nil, err
	}
	d.held += n
	d.seen[k] = true
	return pick(r, d.keys), nil
}
