package plan

import (
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// TestDeriveJoinExpiry: each side's bound comes from a condition that
// puts its time at or after an expression of the other side's watermarked
// time, in the residual or in a filter that is the join's only reader.
func TestDeriveJoinExpiry(t *testing.T) {
	ts, i64 := types.TTimestamp, types.TInt64
	side := func(appendOnly bool) *Node { // (k, at)
		return &Node{Kind: KindConnectorSource, Schema: []types.Type{i64, ts}, StreamKey: []int{0},
			Watermarks: []int{1}, AppendOnly: appendOnly, Connector: &ConnectorSource{Name: "s", Splits: 1}}
	}
	ten := expr.Literal(types.DInterval{Micros: 10_000_000}, types.TInterval)
	// r.at BETWEEN l.at AND l.at + 10s, written as r.at >= l.at AND l.at + 10s >= r.at.
	cond := expr.Node(expr.KindAnd, expr.Func(">=", expr.Input(3, ts), expr.Input(1, ts)),
		expr.Func(">=", expr.Func("+", expr.Input(1, ts), ten), expr.Input(3, ts)))
	join := func(typ JoinType, res *expr.Desc, lAppend bool) *Node {
		l, r := side(lAppend), side(true)
		return &Node{Kind: KindHashJoin, Inputs: []*Node{l, r}, Schema: []types.Type{i64, ts, i64, ts},
			HashJoin: &HashJoin{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: res, Output: []int{0, 1, 2, 3},
				LeftTable: Table{Types: l.Schema, PK: []int{0}, DistKey: []int{0}}, RightTable: Table{Types: r.Schema, PK: []int{0}, DistKey: []int{0}}}}
	}
	j := join(InnerJoin, &cond, true)
	DeriveJoinExpiry(j)
	le, re := j.HashJoin.LeftExpiry, j.HashJoin.RightExpiry
	if le == nil || le.Col != 1 || le.WatermarkCol != 1 || le.Bound.Name != "-" {
		t.Errorf("left expiry %+v, want l.at < right watermark - 10s", le)
	}
	if re == nil || re.Col != 1 || re.WatermarkCol != 1 || re.Bound.Kind != expr.KindInput || re.Bound.Index != 0 {
		t.Errorf("right expiry %+v, want r.at < left watermark", re)
	}

	// l.at + 1 month ≥ r.at does not bound l.at: adding a month is not
	// undone by subtracting one.
	month := expr.Literal(types.DInterval{Months: 1}, types.TInterval)
	byMonth := expr.Func(">=", expr.Func("+", expr.Input(1, ts), month), expr.Input(3, ts))
	j = join(InnerJoin, &byMonth, true)
	DeriveJoinExpiry(j)
	if j.HashJoin.LeftExpiry != nil {
		t.Errorf("left expiry %+v from a month interval", j.HashJoin.LeftExpiry)
	}

	// The same conditions in a filter reading the join, through Output.
	j = join(InnerJoin, nil, true)
	f := &Node{Kind: KindFilter, Inputs: []*Node{j}, Schema: j.Schema, Filter: &Filter{Cond: cond}}
	DeriveJoinExpiry(f)
	if j.HashJoin.LeftExpiry == nil || j.HashJoin.RightExpiry == nil {
		t.Error("a filter above the join gave no expiry")
	}

	for name, n := range map[string]*Node{
		"outer join":        join(LeftJoin, &cond, true),
		"left not append":   join(InnerJoin, &cond, false),
		"no time condition": join(InnerJoin, nil, true),
	} {
		DeriveJoinExpiry(n)
		if name == "left not append" {
			if n.HashJoin.LeftExpiry != nil || n.HashJoin.RightExpiry == nil {
				t.Errorf("%s: expiries %+v %+v, want the right one only", name, n.HashJoin.LeftExpiry, n.HashJoin.RightExpiry)
			}
			continue
		}
		if n.HashJoin.LeftExpiry != nil || n.HashJoin.RightExpiry != nil {
			t.Errorf("%s: expiries %+v %+v, want none", name, n.HashJoin.LeftExpiry, n.HashJoin.RightExpiry)
		}
	}
}
