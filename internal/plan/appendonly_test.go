package plan

import (
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// TestMarkAppendOnlyInputs: an aggregation over an append-only input loses
// its min and max value tables (not its others); one over an input that
// may delete keeps them.
func TestMarkAppendOnlyInputs(t *testing.T) {
	agg := func(in *Node) *Node {
		calls := []AggCall{{Kind: AggMax, Args: []int{1}, Table: &Table{}}, {Kind: AggStringAgg, Args: []int{1, 1}, Table: &Table{}},
			{Kind: AggMin, Args: []int{1}, Table: &Table{}}}
		return &Node{Kind: KindHashAgg, Inputs: []*Node{in}, Schema: shareTypes, StreamKey: []int{0},
			Agg: &Agg{GroupKeys: []int{0}, Calls: calls}}
	}
	src := agg(shareSource())
	vals := agg(&Node{Kind: KindValues, Schema: []types.Type{types.TInt64, types.TInt64}, Values: &Values{}})
	for _, n := range []*Node{src, vals} {
		DeriveStreamProps(n)
		MarkAppendOnlyInputs(n)
	}
	if c := src.Agg.Calls; !src.Agg.AppendOnlyInput || c[0].Table != nil || c[1].Table == nil || c[2].Table != nil {
		t.Errorf("over a source: append-only %v, tables %v %v %v", src.Agg.AppendOnlyInput, c[0].Table, c[1].Table, c[2].Table)
	}
	if c := vals.Agg.Calls; vals.Agg.AppendOnlyInput || c[0].Table == nil || c[2].Table == nil {
		t.Errorf("over values: append-only %v, tables %v %v", vals.Agg.AppendOnlyInput, c[0].Table, c[2].Table)
	}
}

// TestMarkAppendOnlyJoinSides: a join learns which of its inputs only
// insert, side by side.
func TestMarkAppendOnlyJoinSides(t *testing.T) {
	vals := &Node{Kind: KindValues, Schema: []types.Type{types.TInt64, types.TInt64}, Values: &Values{}}
	for _, tc := range []struct {
		l, r         *Node
		wantL, wantR bool
	}{
		{shareSource(), vals, true, false},
		{vals, shareSource(), false, true},
		{shareSource(), shareSource(), true, true},
	} {
		n := &Node{Kind: KindHashJoin, Inputs: []*Node{tc.l, tc.r}, Schema: slices.Concat(tc.l.Schema, tc.r.Schema),
			HashJoin: &HashJoin{Type: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}}}
		DeriveStreamProps(n)
		MarkAppendOnlyInputs(n)
		if n.HashJoin.LeftAppendOnly != tc.wantL || n.HashJoin.RightAppendOnly != tc.wantR {
			t.Errorf("sides append-only %v %v, want %v %v", n.HashJoin.LeftAppendOnly, n.HashJoin.RightAppendOnly, tc.wantL, tc.wantR)
		}
	}
}
