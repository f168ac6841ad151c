package plan

import (
	"reflect"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// TestNullUnread: below a join, each input is narrowed to the columns
// something reads (keys, stream keys, the residual's columns and what the
// projection above reads), and the join is renumbered over them, its
// dropped output columns NULL.
func TestNullUnread(t *testing.T) {
	i64, str := types.TInt64, types.TVarchar
	side := func(key int) *Node {
		return &Node{Kind: KindValues, Schema: []types.Type{i64, str, str, i64}, StreamKey: []int{key}}
	}
	l, r := side(3), side(0)
	res := expr.Func(">", expr.Input(1, str), expr.Input(6, str)) // left $1 > right $2
	join := &Node{Kind: KindHashJoin, Inputs: []*Node{l, r}, Schema: append(l.Schema[:4:4], r.Schema...),
		HashJoin: &HashJoin{LeftKeys: []int{0}, RightKeys: []int{0}, Residual: &res, Output: []int{0, 1, 2, 3, 4, 5, 6, 7},
			LeftTable:  Table{Types: l.Schema, PK: []int{0, 3}, DistKey: []int{0}},
			RightTable: Table{Types: r.Schema, PK: []int{0}, DistKey: []int{0}}}}
	// Above: a projection reading left $0 and right $1 ($5 of the join).
	top := &Node{Kind: KindProject, Inputs: []*Node{join}, Schema: []types.Type{i64, str},
		Project: &Project{Exprs: []expr.Desc{expr.Input(0, i64), expr.Input(5, str)}}}
	NullUnread(top)
	kept := func(n *Node) []int {
		if n.Kind != KindProject {
			t.Fatalf("join input is %s, not a narrowing projection", n.Kind)
		}
		var k []int
		for _, e := range n.Project.Exprs {
			k = append(k, e.Index)
		}
		return k
	}
	// Left: key $0, residual $1, stream key $3; $2 goes.
	if got := kept(join.Inputs[0]); !slices.Equal(got, []int{0, 1, 3}) {
		t.Errorf("left kept %v", got)
	}
	// Right: key and stream key $0, read $1, residual $2; $3 goes.
	if got := kept(join.Inputs[1]); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("right kept %v", got)
	}
	j := join.HashJoin
	if !slices.Equal(j.Output, []int{0, 1, -1, 2, 3, 4, 5, -1}) {
		t.Errorf("output %v", j.Output)
	}
	if want := expr.Func(">", expr.Input(1, str), expr.Input(5, str)); !reflect.DeepEqual(*j.Residual, want) {
		t.Errorf("residual %v, want %v", *j.Residual, want)
	}
	if !slices.Equal(j.LeftTable.PK, []int{0, 2}) || len(j.LeftTable.Types) != 3 || !slices.Equal(j.RightTable.PK, []int{0}) {
		t.Errorf("tables %+v %+v", j.LeftTable, j.RightTable)
	}
	if !slices.Equal(join.Inputs[0].StreamKey, []int{2}) || !slices.Equal(join.Schema, append(l.Schema[:4:4], r.Schema...)) {
		t.Errorf("left stream key %v, join schema %v", join.Inputs[0].StreamKey, join.Schema)
	}
	// A join read by two projections, each reading one column, is
	// narrowed once, for both: as if all of it were read.
	l3, r3 := side(0), side(0)
	j3 := &Node{Kind: KindHashJoin, Inputs: []*Node{l3, r3}, Schema: append(l3.Schema[:4:4], r3.Schema...),
		HashJoin: &HashJoin{LeftKeys: []int{0}, RightKeys: []int{0}, Output: []int{0, 1, 2, 3, 4, 5, 6, 7},
			LeftTable: Table{Types: l3.Schema, PK: []int{0}, DistKey: []int{0}}, RightTable: Table{Types: r3.Schema, PK: []int{0}, DistKey: []int{0}}}}
	reads := func(c int) *Node {
		return &Node{Kind: KindProject, Inputs: []*Node{j3}, Schema: []types.Type{j3.Schema[c]},
			Project: &Project{Exprs: []expr.Desc{expr.Input(c, j3.Schema[c])}}}
	}
	NullUnread(&Node{Kind: KindUnion, Inputs: []*Node{reads(1), reads(2)}, Schema: []types.Type{str}})
	if j3.Inputs[0] != l3 || j3.Inputs[1] != r3 || !slices.Equal(j3.HashJoin.Output, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("a join read twice was narrowed: inputs %s %s, output %v", j3.Inputs[0].Kind, j3.Inputs[1].Kind, j3.HashJoin.Output)
	}
	// Under a node whose reads are not known (a top-N), nothing is NULLed.
	l2, r2 := side(0), side(0)
	j2 := &Node{Kind: KindHashJoin, Inputs: []*Node{l2, r2}, Schema: append(l2.Schema[:4:4], r2.Schema...),
		HashJoin: &HashJoin{LeftKeys: []int{0}, RightKeys: []int{0}, Output: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
	NullUnread(&Node{Kind: KindTopN, Inputs: []*Node{j2}, Schema: j2.Schema, TopN: &TopN{Limit: 1}})
	if j2.Inputs[0] != l2 || j2.Inputs[1] != r2 {
		t.Error("a join under a top-N had its inputs narrowed")
	}
}
