// Package refeval evaluates a logical streaming plan from scratch over
// the current contents of its input tables, row by row, as plainly as
// possible. It is the oracle the whole-system tests compare every
// materialized view against: an incremental result must equal this
// recomputation at every committed epoch.
package refeval

import (
	"fmt"
	"slices"
	"sort"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Tables returns the rows of a state table by id.
type Tables func(tableID uint32) ([]types.Row, error)

// Eval computes n's output rows.
func Eval(n *plan.Node, tables Tables) ([]types.Row, error) {
	ins := make([][]types.Row, len(n.Inputs))
	for i, in := range n.Inputs {
		if in.Kind == plan.KindMerge {
			return nil, fmt.Errorf("refeval: plan already fragmented")
		}
		rows, err := Eval(in, tables)
		if err != nil {
			return nil, err
		}
		ins[i] = rows
	}
	switch n.Kind {
	case plan.KindBackfill:
		return backfill(n.Backfill, tables)
	case plan.KindValues:
		return values(n)
	case plan.KindProject:
		return project(n, ins[0])
	case plan.KindFilter:
		return filter(n, ins[0])
	case plan.KindUnion:
		return slices.Concat(ins...), nil
	case plan.KindHashJoin:
		return join(n, ins[0], ins[1])
	case plan.KindHashAgg, plan.KindSimpleAgg, plan.KindLocalAgg:
		return aggregate(n, ins[0])
	case plan.KindDistinct:
		return distinct(n.Distinct.Keys, ins[0]), nil
	case plan.KindTopN:
		return topN(n, ins[0]), nil
	case plan.KindMaterialize:
		return ins[0], nil
	}
	return nil, fmt.Errorf("refeval: unsupported node %s", n.Kind)
}

func backfill(b *plan.Backfill, tables Tables) ([]types.Row, error) {
	rows, err := tables(b.Upstream.ID)
	if err != nil {
		return nil, err
	}
	out := make([]types.Row, len(rows))
	for i, r := range rows {
		out[i] = pick(r, b.Columns)
	}
	return out, nil
}

func pick(r types.Row, cols []int) types.Row {
	out := make(types.Row, len(cols))
	for i, c := range cols {
		if c >= 0 { // -1: NULL (a join's output column nothing reads)
			out[i] = r[c]
		}
	}
	return out
}

func values(n *plan.Node) ([]types.Row, error) {
	ctx := &expr.Context{}
	var out []types.Row
	for _, descs := range n.Values.Rows {
		row := make(types.Row, len(descs))
		for i, d := range descs {
			e, err := expr.Build(d, nil)
			if err != nil {
				return nil, err
			}
			v, err := expr.EvalRow(ctx, e, types.Row{}, nil)
			if err != nil {
				return nil, err
			}
			row[i] = v
		}
		out = append(out, row)
	}
	return out, nil
}

// evalRows evaluates e over each row, non-strictly (a row error is NULL,
// as inside a streaming job).
func evalRows(d expr.Desc, in []types.Type, rows []types.Row) ([]types.Datum, error) {
	e, err := expr.Build(d, in)
	if err != nil {
		return nil, err
	}
	ctx := &expr.Context{}
	out := make([]types.Datum, len(rows))
	for i, r := range rows {
		v, err := expr.EvalRow(ctx, e, r, in)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func project(n *plan.Node, rows []types.Row) ([]types.Row, error) {
	in := n.Inputs[0].Schema
	out := make([]types.Row, len(rows))
	for i := range out {
		out[i] = make(types.Row, len(n.Project.Exprs))
	}
	for j, d := range n.Project.Exprs {
		vals, err := evalRows(d, in, rows)
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			out[i][j] = v
		}
	}
	return out, nil
}

func filter(n *plan.Node, rows []types.Row) ([]types.Row, error) {
	vals, err := evalRows(n.Filter.Cond, n.Inputs[0].Schema, rows)
	if err != nil {
		return nil, err
	}
	var out []types.Row
	for i, v := range vals {
		if b, ok := v.(bool); ok && b {
			out = append(out, rows[i])
		}
	}
	return out, nil
}

func distinct(keys []int, rows []types.Row) []types.Row {
	seen := map[string]bool{}
	var out []types.Row
	for _, r := range rows {
		k := pick(r, keys)
		s := fmt.Sprint(keyString(k))
		if !seen[s] {
			seen[s] = true
			out = append(out, k)
		}
	}
	return out
}

// keyString is a canonical string of datums that compare equal.
func keyString(r types.Row) string {
	ts := make([]types.Type, len(r))
	for i, d := range r {
		ts[i] = typeOf(d)
	}
	b, err := codec.EncodeKey(nil, r, ts, nil)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func typeOf(d types.Datum) types.Type {
	for id := types.Bool; id <= types.Interval; id++ {
		t := types.Type{ID: id}
		if d == nil || types.CheckDatum(d, t) == nil {
			if d == nil {
				return types.TInt64
			}
			return t
		}
	}
	return types.TUnknown
}

func topN(n *plan.Node, rows []types.Row) []types.Row {
	t := n.TopN
	groups := map[string][]types.Row{}
	var order []string
	for _, r := range rows {
		k := keyString(pick(r, t.GroupKeys))
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	sk := n.Inputs[0].StreamKey
	var out []types.Row
	for _, k := range order {
		g := groups[k]
		sort.SliceStable(g, func(i, j int) bool { return compareOrdered(g[i], g[j], t.OrderBy, sk) < 0 })
		lo := min(int(t.Offset), len(g))
		hi := len(g)
		if t.Limit >= 0 {
			hi = min(lo+int(t.Limit), len(g))
		}
		if t.WithTies {
			for hi < len(g) && hi > lo && compareOrdered(g[hi-1], g[hi], t.OrderBy, nil) == 0 {
				hi++
			}
		}
		out = append(out, g[lo:hi]...)
	}
	return out
}

// compareOrdered compares by ORDER BY items (with NULL placement and
// direction), then by the stream key ascending.
func compareOrdered(a, b types.Row, by []plan.ColumnOrder, sk []int) int {
	for _, o := range by {
		if c := compareNulls(a[o.Column], b[o.Column], o.Order); c != 0 {
			return c
		}
	}
	for _, c := range sk {
		if x := types.Compare(a[c], b[c]); x != 0 {
			return x
		}
	}
	return 0
}

func compareNulls(x, y types.Datum, o codec.Order) int {
	switch {
	case x == nil && y == nil:
		return 0
	case x == nil:
		if o.NullsFirst {
			return -1
		}
		return 1
	case y == nil:
		if o.NullsFirst {
			return 1
		}
		return -1
	}
	c := types.Compare(x, y)
	if o.Desc {
		return -c
	}
	return c
}
