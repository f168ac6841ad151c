package build

import (
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// wideTable is a table of five columns whose key is the hidden column 4
// and whose distribution key is column 0.
var wideTable = plan.Table{ID: 7, Types: []types.Type{types.TInt64, types.TVarchar, types.TInt64, types.TVarchar, types.TInt64},
	PK: []int{4}, DistKey: []int{0}}

func backfillOver(cols []int) *plan.Node {
	merge := &plan.Node{Kind: plan.KindMerge, Schema: wideTable.Types, Merge: &plan.Merge{UpstreamFragment: 2}}
	schema := make([]types.Type, len(cols))
	for j, c := range cols {
		schema[j] = wideTable.Types[c]
	}
	return &plan.Node{Kind: plan.KindBackfill, Inputs: []*plan.Node{merge}, Schema: schema,
		Backfill: &plan.Backfill{Upstream: wideTable, Columns: cols}}
}

func project(in *plan.Node, refs ...int) *plan.Node {
	n := &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{in}, Project: &plan.Project{}}
	for _, r := range refs {
		n.Project.Exprs = append(n.Project.Exprs, expr.Input(r, in.Schema[r]))
		n.Schema = append(n.Schema, in.Schema[r])
	}
	return n
}

// mergeReads follows the first inputs from root to the merge at the
// bottom, passing reads down as node does.
func mergeReads(root *plan.Node) []bool {
	var out []bool
	for n := root; n.Kind != plan.KindMerge; n = n.Inputs[0] {
		out = inputReads(n, out)[0]
	}
	return out
}

func TestReadsNarrowToProjectedAndKeyColumns(t *testing.T) {
	bf := backfillOver([]int{0, 1, 2, 3, 4})
	cond := expr.Desc{Kind: expr.KindFunc, Name: "=", Type: types.TBool,
		Args: []expr.Desc{expr.Input(3, types.TVarchar), expr.Literal("x", types.TVarchar)}}
	filtered := &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{bf}, Schema: bf.Schema, Filter: &plan.Filter{Cond: cond}}
	for _, c := range []struct {
		name string
		root *plan.Node
		want []bool
	}{
		// Column 2 is read; 0 routes and 4 fences; 1 and 3 are skipped.
		{"project", project(bf, 2), []bool{true, false, true, false, true}},
		// The filter's condition reads column 3 too.
		{"project over filter", project(filtered, 2), []bool{true, false, true, true, true}},
		// A backfill of some columns maps its outputs to upstream ones.
		{"backfill of a subset", project(backfillOver([]int{4, 1}), 1), []bool{true, true, false, false, true}},
		// Every column read: no mask at all.
		{"project of all", project(bf, 0, 1, 2, 3, 4), nil},
		// Nothing narrows above a bare backfill (its consumer reads all).
		{"backfill alone", bf, nil},
	} {
		if got := mergeReads(c.root); !slices.Equal(got, c.want) {
			t.Errorf("%s: merge reads %v, want %v", c.name, got, c.want)
		}
	}
}

func TestReadsOfOtherNodesAreAll(t *testing.T) {
	bf := backfillOver([]int{0, 1, 2, 3, 4})
	agg := &plan.Node{Kind: plan.KindHashAgg, Inputs: []*plan.Node{bf}, Schema: []types.Type{types.TInt64}, Agg: &plan.Agg{GroupKeys: []int{0}}}
	if got := inputReads(agg, []bool{true}); got[0] != nil {
		t.Fatalf("an aggregation's input reads %v, want all", got[0])
	}
	// An out-of-range reference reads all, leaving the error to the node.
	bad := project(bf, 2)
	bad.Project.Exprs[0].Index = 9
	if got := inputReads(bad, nil); got[0] != nil {
		t.Fatalf("a bad reference narrowed the reads to %v", got[0])
	}
}
