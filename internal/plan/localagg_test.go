package plan

import (
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// TestSplitLocalAggs: an aggregation over a source by a key the source is
// not distributed by gets a local aggregation below it, whose partials it
// combines (sum_counts for the counts, the same extreme for min and max);
// one with a call that does not combine, or over an input that may
// delete, or whose input is shared, stays whole.
func TestSplitLocalAggs(t *testing.T) {
	calls := func(extra ...AggCall) []AggCall {
		return append([]AggCall{{Kind: AggCountStar, Type: types.TInt64}, {Kind: AggCount, Args: []int{1}, Type: types.TInt64},
			{Kind: AggMax, Args: []int{1}, Type: types.TInt64}}, extra...)
	}
	agg := func(in *Node, cs []AggCall) *Node {
		return &Node{Kind: KindHashAgg, Inputs: []*Node{in}, Schema: []types.Type{types.TInt64, types.TInt64, types.TInt64, types.TInt64},
			StreamKey: []int{0}, Agg: &Agg{GroupKeys: []int{1}, Calls: cs}}
	}
	prepare := func(n *Node) *Node {
		DeriveStreamProps(n)
		MarkAppendOnlyInputs(n)
		SplitLocalAggs(n)
		return n
	}
	src := shareSource()
	src.Watermarks = []int{1} // on the group key: the local output's column 0
	n := prepare(agg(src, calls()))
	local := n.Inputs[0]
	if local.Kind != KindLocalAgg || !slices.Equal(local.LocalAgg.GroupKeys, []int{1}) || !local.AppendOnly {
		t.Fatalf("no local aggregation below: %+v", local)
	}
	if !slices.Equal(local.Watermarks, []int{0}) || !slices.Equal(n.Watermarks, []int{0}) {
		t.Errorf("watermarks: local %v, global %v", local.Watermarks, n.Watermarks)
	}
	if got := n.Agg.Calls; got[0].Kind != AggSumCounts || got[1].Kind != AggSumCounts || got[2].Kind != AggMax ||
		got[0].Args[0] != 1 || got[1].Args[0] != 2 || got[2].Args[0] != 3 || !slices.Equal(n.Agg.GroupKeys, []int{0}) {
		t.Errorf("global calls %+v, keys %v", got, n.Agg.GroupKeys)
	}
	if len(local.Schema) != 4 || local.Inputs[0].Kind != KindConnectorSource {
		t.Errorf("local schema %v over %s", local.Schema, local.Inputs[0].Kind)
	}

	sum := AggCall{Kind: AggSum, Args: []int{1}, Type: types.TDecimal}
	vals := &Node{Kind: KindValues, Schema: shareTypes, Values: &Values{}}
	one := shareSource()
	shared := agg(one, calls())
	twice := &Node{Kind: KindUnion, Inputs: []*Node{shared, agg(one, calls())}, Schema: shared.Schema}
	for name, n := range map[string]*Node{
		"a sum":           agg(shareSource(), calls(sum)),
		"values":          agg(vals, calls()),
		"a shared source": twice.Inputs[0],
		"distinct count":  agg(shareSource(), calls(AggCall{Kind: AggCount, Args: []int{0}, Type: types.TInt64, Distinct: true})),
	} {
		root := n
		if name == "a shared source" {
			root = twice
		}
		prepare(root)
		if n.Inputs[0].Kind == KindLocalAgg {
			t.Errorf("%s: split", name)
		}
	}
}

// TestSplitLocalAggsOverSharedChain: over a projection of a shared source,
// an aggregation whose group key the projection passes through stays
// whole (the source dispatches to it by that column), and one whose key
// the projection computes (a window's end) is split: its chain runs in a
// fragment of its own either way, and the local aggregation shrinks what
// crosses the exchange after it.
func TestSplitLocalAggsOverSharedChain(t *testing.T) {
	calls := []AggCall{{Kind: AggMax, Args: []int{1}, Type: types.TInt64}}
	for _, tc := range []struct {
		name  string
		key   expr.Desc
		split bool
	}{
		{"key passed through", expr.Input(1, types.TInt64), false},
		{"key computed", expr.Func("+", expr.Input(1, types.TInt64), expr.Literal(int64(10), types.TInt64)), true},
	} {
		src := shareSource()
		proj := func() *Node {
			return &Node{Kind: KindProject, Inputs: []*Node{src}, Schema: []types.Type{types.TInt64, types.TInt64},
				StreamKey: []int{1}, Project: &Project{Exprs: []expr.Desc{tc.key, expr.Input(0, types.TInt64)}}}
		}
		a := &Node{Kind: KindHashAgg, Inputs: []*Node{proj()}, Schema: []types.Type{types.TInt64, types.TInt64},
			StreamKey: []int{0}, Agg: &Agg{GroupKeys: []int{0}, Calls: slices.Clone(calls)}}
		other := &Node{Kind: KindHashAgg, Inputs: []*Node{proj()}, Schema: a.Schema, StreamKey: []int{0},
			Agg: &Agg{GroupKeys: []int{0}, Calls: slices.Clone(calls)}}
		root := &Node{Kind: KindUnion, Inputs: []*Node{a, other}, Schema: a.Schema}
		DeriveStreamProps(root)
		MarkAppendOnlyInputs(root)
		SplitLocalAggs(root)
		if got := a.Inputs[0].Kind == KindLocalAgg; got != tc.split {
			t.Errorf("%s: split %v, want %v", tc.name, got, tc.split)
		}
	}
}
