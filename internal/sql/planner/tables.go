package planner

import (
	"context"
	"reflect"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream/agg"
	"github.com/sluice-db/sluice/internal/stream/stateless"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// State tables are shaped here exactly as each executor checks them (see
// the engine's builder_test.go). They are created with id 0; assignIDs
// gives a streaming plan's tables fresh ids once the plan is complete, and
// a batch plan keeps zeros (it has no state).

func distinctTable(in []types.Type, keys []int) plan.Table {
	l := agg.DistinctLayout(in, keys)
	return plan.Table{Types: l.Types, PK: l.PK, DistKey: seq(len(keys))}
}

// topN keeps the rows ranked offset+1 … offset+limit by `by`. Its table is
// keyed by the order columns then the stream key, without duplicates.
func (q *query) topN(r *relExpr, by []plan.ColumnOrder, limit, offset int64) *relExpr {
	t, kept := topNTable(r.node, nil, by)
	n := &plan.Node{Kind: plan.KindTopN, Inputs: []*plan.Node{r.node}, Schema: r.node.Schema, StreamKey: r.node.StreamKey,
		TopN: &plan.TopN{OrderBy: kept, Limit: limit, Offset: offset, Table: t}}
	return &relExpr{node: n, cols: r.cols}
}

// topNTable is a top-N's state table over in: keyed by the group, the
// order columns not already in it, then the stream key, and spread by the
// group. kept is by without its repeated columns.
func topNTable(in *plan.Node, groups []int, by []plan.ColumnOrder) (t plan.Table, kept []plan.ColumnOrder) {
	pk := slices.Clone(groups)
	orders := make([]codec.Order, len(groups))
	for _, o := range by {
		if !slices.Contains(pk, o.Column) {
			pk = append(pk, o.Column)
			orders = append(orders, o.Order)
			kept = append(kept, o)
		}
	}
	for _, k := range in.StreamKey {
		if !slices.Contains(pk, k) {
			pk = append(pk, k)
			orders = append(orders, codec.Order{})
		}
	}
	return plan.Table{Types: in.Schema, PK: pk, Orders: orders, DistKey: slices.Clone(groups)}, kept
}

// sideTable holds one join input keyed by (join keys, stream key).
func sideTable(in *plan.Node, keys []int) plan.Table {
	pk := slices.Clone(keys)
	for _, k := range in.StreamKey {
		if !slices.Contains(pk, k) {
			pk = append(pk, k)
		}
	}
	return plan.Table{Types: in.Schema, PK: pk, DistKey: slices.Clone(keys)}
}

// degreeTable counts the matches of each row of an outer side.
func degreeTable(side plan.Table, nkeys int) *plan.Table {
	var ts []types.Type
	for _, c := range side.PK {
		ts = append(ts, side.Types[c])
	}
	ts = append(ts, types.TInt64)
	return &plan.Table{Types: ts, PK: seq(len(side.PK)), DistKey: seq(nkeys)}
}

// aggTables gives each call that needs one its table, and returns the
// result table.
func aggTables(in []types.Type, groups []int, calls []plan.AggCall) plan.Table {
	for i := range calls {
		if l, ok := agg.CallLayout(in, groups, calls[i]); ok {
			calls[i].Table = &plan.Table{Types: l.Types, PK: l.PK, Orders: l.Orders, DistKey: seq(len(groups))}
		}
	}
	l := agg.ResultLayout(in, groups, calls)
	return plan.Table{Types: l.Types, PK: l.PK, Orders: l.Orders, DistKey: seq(len(groups))}
}

// stateTables lists pointers to every state table of the plan, a shared
// node's once.
func stateTables(n *plan.Node) []*plan.Table {
	var out []*plan.Table
	seen := map[*plan.Node]bool{}
	var walk func(n *plan.Node)
	walk = func(n *plan.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		// In a streaming job the rows are emitted once, ever: the flag
		// table keeps a rebuilt actor from emitting them again.
		if n.Values != nil && n.Values.Table == nil {
			t := stateless.ValuesTable(0)
			n.Values.Table = &t
		}
		// A table source's offsets and a view's table have ids of their
		// own (the table's, the view's).
		if n.Kind != plan.KindTableSource && n.Kind != plan.KindMaterialize {
			for _, t := range n.Tables() {
				if t != nil {
					out = append(out, t)
				}
			}
		}
		for _, in := range n.Inputs {
			walk(in)
		}
	}
	walk(n)
	return out
}

// assignIDs gives every state table of a streaming plan a fresh id.
func (p *Planner) assignIDs(ctx context.Context, root *plan.Node) error {
	ts := stateTables(root)
	if len(ts) == 0 {
		return nil
	}
	ids, err := p.ids.IDs(ctx, len(ts))
	if err != nil {
		return err
	}
	for _, t := range ts {
		t.ID = ids.Next()
	}
	return nil
}

// descEqual reports whether two bound expressions are the same.
func descEqual(a, b expr.Desc) bool { return reflect.DeepEqual(a, b) }
