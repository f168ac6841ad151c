package agg

import (
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Layout is the shape a state table must have: the planner fills
// plan.Table.Types/PK/Orders from it (ID and DistKey are its own; DistKey
// must lie within the group-key columns, which lead every table).
type Layout struct {
	Types  []types.Type
	PK     []int
	Orders []codec.Order
}

// ResultLayout is the shape of Agg.ResultTable: the group keys (the PK),
// one column per call holding the group's last emitted output, the group's
// row count (bigint) and the calls' running states (bytea, see
// encodeStates).
func ResultLayout(in []types.Type, groupKeys []int, calls []plan.AggCall) Layout {
	var l Layout
	for i, g := range groupKeys {
		l.Types = append(l.Types, in[g])
		l.PK = append(l.PK, i)
	}
	for _, c := range calls {
		l.Types = append(l.Types, c.Type)
	}
	l.Types = append(l.Types, types.TInt64, types.TBytea)
	return l
}

// CallLayout is the shape of AggCall.Table for calls that need one (min,
// max, string_agg, any DISTINCT call; ok is false otherwise): the group
// keys, the call's value columns, then a bigint multiplicity. The PK is
// everything but the multiplicity, so a group's rows are one prefix scan
// and, for min and max, the first row is the answer:
//
//	min, max, DISTINCT x:  group keys, x            (max orders x DESC)
//	string_agg(x, d ORDER BY o...):  group keys, o..., x, d
//	array_agg(x ORDER BY o...):      group keys, o..., x
func CallLayout(in []types.Type, groupKeys []int, call plan.AggCall) (l Layout, ok bool) {
	cols, orders := callValueColumns(call)
	if cols == nil {
		return Layout{}, false
	}
	for _, g := range groupKeys {
		l.Types = append(l.Types, in[g])
		l.Orders = append(l.Orders, codec.Order{})
	}
	for _, c := range cols {
		l.Types = append(l.Types, in[c])
	}
	l.Orders = append(l.Orders, orders...)
	for i := range len(l.Types) {
		l.PK = append(l.PK, i)
	}
	l.Types = append(l.Types, types.TInt64)
	return l, true
}

// callValueColumns returns the input columns a table-backed call stores
// after the group keys, with their key orders; nil when the call keeps no
// table.
func callValueColumns(call plan.AggCall) ([]int, []codec.Order) {
	switch call.Kind {
	case plan.AggMin:
		return []int{call.Args[0]}, []codec.Order{{}}
	case plan.AggMax:
		return []int{call.Args[0]}, []codec.Order{{Desc: true}}
	case plan.AggStringAgg, plan.AggArrayAgg:
		var cols []int
		var orders []codec.Order
		for _, o := range call.OrderBy {
			cols = append(cols, o.Column)
			orders = append(orders, o.Order)
		}
		for range call.Args {
			orders = append(orders, codec.Order{})
		}
		return append(cols, call.Args...), orders
	}
	if call.Distinct && len(call.Args) > 0 {
		return []int{call.Args[0]}, []codec.Order{{}}
	}
	return nil, nil
}

// DistinctLayout is the shape of Distinct.Table: the key columns (the PK)
// then a bigint duplicate count.
func DistinctLayout(in []types.Type, keys []int) Layout {
	var l Layout
	for i, k := range keys {
		l.Types = append(l.Types, in[k])
		l.PK = append(l.PK, i)
	}
	l.Types = append(l.Types, types.TInt64)
	return l
}

// openTable checks that t has the layout want, and opens it for the actor.
// nGroup is the number of leading group-key columns DistKey must lie in.
func openTable(env *stream.Env, t *plan.Table, want Layout, nGroup int) (*storage.StateTable, error) {
	if t == nil {
		return nil, fmt.Errorf("missing state table")
	}
	if !slices.Equal(t.Types, want.Types) {
		return nil, fmt.Errorf("table %d: types %v, want %v", t.ID, t.Types, want.Types)
	}
	if !slices.Equal(t.PK, want.PK) {
		return nil, fmt.Errorf("table %d: pk %v, want %v", t.ID, t.PK, want.PK)
	}
	if t.Orders != nil && !slices.Equal(t.Orders, want.Orders) && !allAsc(t.Orders, want.Orders) {
		return nil, fmt.Errorf("table %d: orders %v, want %v", t.ID, t.Orders, want.Orders)
	}
	for _, c := range t.DistKey {
		if c < 0 || c >= nGroup {
			return nil, fmt.Errorf("table %d: dist key column %d is not a group key", t.ID, c)
		}
	}
	if env == nil || env.Store == nil {
		return nil, fmt.Errorf("table %d: no store in env", t.ID)
	}
	// The table is opened with the layout's orders: the check above lets a
	// plan spell all-ascending orders as nil.
	opened := *t
	opened.Orders = want.Orders
	st, err := env.OpenTable(opened)
	if err != nil {
		return nil, fmt.Errorf("open table %d: %w", t.ID, err)
	}
	return st, nil
}

// allAsc reports whether got is all-default orders and want is too (nil and
// explicit zero orders mean the same).
func allAsc(got, want []codec.Order) bool {
	for _, o := range append(slices.Clone(got), want...) {
		if o != (codec.Order{}) {
			return false
		}
	}
	return true
}
