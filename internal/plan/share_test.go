package plan

import (
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

var shareTypes = []types.Type{types.TInt64, types.TInt64}

func shareSource() *Node {
	return &Node{Kind: KindConnectorSource, Schema: shareTypes, StreamKey: []int{0},
		Connector: &ConnectorSource{Name: "s", Splits: 2}}
}

// countBy is SELECT $key, count(*) FROM s GROUP BY $key, with the count
// first when swap is set (a projection above the aggregation).
func countBy(key int, swap bool) *Node {
	agg := &Node{Kind: KindHashAgg, Inputs: []*Node{shareSource()}, Schema: shareTypes, StreamKey: []int{0},
		Agg: &Agg{GroupKeys: []int{key}, Calls: []AggCall{{Kind: AggCountStar}}}}
	exprs := []expr.Desc{expr.Input(0, types.TInt64), expr.Input(1, types.TInt64)}
	if swap {
		exprs[0], exprs[1] = exprs[1], exprs[0]
	}
	return &Node{Kind: KindProject, Inputs: []*Node{agg}, Schema: shareTypes, StreamKey: []int{1},
		Project: &Project{Exprs: exprs}}
}

// selfJoin joins two inputs on $0 = $0 under a materialize.
func selfJoin(l, r *Node) *Node {
	four := append(append([]types.Type(nil), shareTypes...), shareTypes...)
	j := &Node{Kind: KindHashJoin, Inputs: []*Node{l, r}, Schema: four, StreamKey: []int{0, 2},
		HashJoin: &HashJoin{Type: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, Output: []int{0, 1, 2, 3}}}
	return &Node{Kind: KindMaterialize, Inputs: []*Node{j}, Schema: four, StreamKey: []int{0, 2},
		Materialize: &Materialize{Table: Table{Types: four, PK: []int{0, 2}, DistKey: []int{0}}}}
}

// TestShareCommonMergesEqualStatefulSubtrees: the same aggregation over
// the same source, read through different projections, becomes one node;
// a different aggregation does not; constants are never shared.
func TestShareCommonMergesEqualStatefulSubtrees(t *testing.T) {
	l, r := countBy(0, false), countBy(0, true)
	root := selfJoin(l, r)
	if got := ShareCommon(root); got != 1 {
		t.Fatalf("%d nodes shared, want 1 (the aggregation)", got)
	}
	if l.Inputs[0] != r.Inputs[0] {
		t.Fatal("the two equal aggregations are still two nodes")
	}
	if l == r {
		t.Fatal("the two different projections were merged")
	}

	other := selfJoin(countBy(0, false), countBy(1, false))
	if got := ShareCommon(other); got != 1 {
		t.Fatalf("%d nodes shared under two different aggregations, want 1 (their source)", got)
	}
	vals := func() *Node {
		return &Node{Kind: KindValues, Schema: shareTypes, StreamKey: []int{0}, Values: &Values{}}
	}
	if got := ShareCommon(selfJoin(vals(), vals())); got != 0 {
		t.Fatalf("%d constant nodes shared, want 0", got)
	}
}

// TestFragmentizeShared: a shared aggregation heads one fragment that
// dispatches to the join's fragment twice, on two ports, the join's
// projections running in the join's fragment; its state tables are
// listed once.
func TestFragmentizeShared(t *testing.T) {
	root := selfJoin(countBy(0, false), countBy(0, true))
	ShareCommon(root)
	next := uint32(0)
	tables := uint32(100)
	agg := root.Inputs[0].Inputs[0].Inputs[0]
	for _, tb := range agg.Tables() {
		if tb != nil {
			tables++
			tb.ID = tables
		}
	}
	DeriveStreamProps(root)
	job, err := Fragmentize(1, root, FragmentOptions{Parallelism: 2, NextFragmentID: func() uint32 { next++; return next }})
	if err != nil {
		t.Fatal(err)
	}
	var head *Fragment
	for _, f := range job.Fragments {
		if f.Root == agg {
			head = f
		}
	}
	if head == nil {
		t.Fatal("the shared aggregation heads no fragment")
	}
	if len(head.Outputs) != 2 || head.Outputs[0].Downstream != head.Outputs[1].Downstream ||
		head.Outputs[0].Port != 0 || head.Outputs[1].Port != 1 {
		t.Fatalf("shared fragment dispatches %+v, want two edges to one fragment on ports 0 and 1", head.Outputs)
	}
	join := job.Fragment(head.Outputs[0].Downstream).Root
	for join.Kind != KindHashJoin {
		join = join.Inputs[0]
	}
	for i, in := range join.Inputs {
		if in.Kind != KindProject || in.Inputs[0].Kind != KindMerge || in.Inputs[0].Merge.Port != uint32(i) {
			t.Fatalf("join input %d is %s over %+v, want a projection over the merge of port %d", i, in.Kind, in.Inputs[0], i)
		}
	}
	// The join reads $0 of each projection: the aggregation's $0 on the
	// left, its $1 on the right.
	if k := head.Outputs[0].DistKey; len(k) != 1 || k[0] != 0 {
		t.Errorf("left edge hashes by %v, want [0]", k)
	}
	if k := head.Outputs[1].DistKey; len(k) != 1 || k[0] != 1 {
		t.Errorf("right edge hashes by %v, want [1]", k)
	}
	ids := job.StateTables()
	seen := map[uint32]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("state table %d listed twice in %v", id, ids)
		}
		seen[id] = true
	}
}
