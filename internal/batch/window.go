package batch

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/window"
)

// overWindow collects its input by partition, sorts each partition by
// the window's ORDER BY (stably, so peers keep their input order) and
// appends the calls' values to every row.
func (x *executor) overWindow(ctx context.Context, n *plan.Node, emit emitFunc) error {
	w := n.OverWindow
	if w == nil || len(n.Inputs) != 1 {
		return fmt.Errorf("batch: malformed over_window node")
	}
	ev, err := window.New(w.Calls, x.ectx)
	if err != nil {
		return err
	}
	in := n.Inputs[0].Schema
	parts := map[string][]types.Row{}
	var order []string
	err = x.run(ctx, n.Inputs[0], func(_ context.Context, c *types.Chunk) error {
		for _, i := range c.VisibleIndices() {
			r := c.Row(i)
			k, err := keyOf(r, w.PartitionBy, in)
			if err != nil {
				return err
			}
			if _, ok := parts[k]; !ok {
				order = append(order, k)
			}
			if err := x.keepRow(r); err != nil {
				return err
			}
			parts[k] = append(parts[k], r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	bld := types.NewBuilder(n.Schema, x.size)
	for _, k := range order {
		rows := parts[k]
		slices.SortStableFunc(rows, func(a, b types.Row) int { return compareBy(a, b, w.OrderBy) })
		vals, err := ev.Eval(sortedPartition{rows: rows, by: w.OrderBy}, 0, len(rows))
		if err != nil {
			return err
		}
		for i, r := range rows {
			if err := send(ctx, emit, bld.Append(types.Insert, append(slices.Clip(r), vals[i]...))); err != nil {
				return err
			}
		}
		delete(parts, k)
	}
	return send(ctx, emit, bld.Take())
}

// sortedPartition is a partition's rows sorted by the window's ORDER BY.
type sortedPartition struct {
	rows []types.Row
	by   []plan.ColumnOrder
}

func (p sortedPartition) Len() int            { return len(p.rows) }
func (p sortedPartition) Row(i int) types.Row { return p.rows[i] }
func (p sortedPartition) Peers(i, j int) bool { return compareBy(p.rows[i], p.rows[j], p.by) == 0 }
