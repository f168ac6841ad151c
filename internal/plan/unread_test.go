package plan

import (
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// TestNullUnread: below a join, the input columns nothing above reads
// become NULLs; keys, stream keys, the residual's columns and what the
// projection above reads stay.
func TestNullUnread(t *testing.T) {
	i64, str := types.TInt64, types.TVarchar
	side := func(key int) *Node {
		return &Node{Kind: KindValues, Schema: []types.Type{i64, str, str, i64}, StreamKey: []int{key}}
	}
	l, r := side(3), side(0)
	res := expr.Func(">", expr.Input(1, str), expr.Input(6, str)) // left $1 > right $2
	join := &Node{Kind: KindHashJoin, Inputs: []*Node{l, r}, Schema: append(l.Schema[:4:4], r.Schema...),
		HashJoin: &HashJoin{LeftKeys: []int{0}, RightKeys: []int{0}, Residual: &res, Output: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
	// Above: a projection reading left $0 and right $1 ($5 of the join).
	top := &Node{Kind: KindProject, Inputs: []*Node{join}, Schema: []types.Type{i64, str},
		Project: &Project{Exprs: []expr.Desc{expr.Input(0, i64), expr.Input(5, str)}}}
	NullUnread(top)
	kept := func(n *Node) []bool {
		if n.Kind != KindProject {
			t.Fatalf("join input is %s, not a nulling projection", n.Kind)
		}
		var k []bool
		for _, e := range n.Project.Exprs {
			k = append(k, e.Kind == expr.KindInput)
		}
		return k
	}
	// Left: key $0, residual $1, stream key $3; $2 is NULL.
	if got := kept(join.Inputs[0]); got[0] != true || got[1] != true || got[2] != false || got[3] != true {
		t.Errorf("left kept %v", got)
	}
	// Right: key and stream key $0, read $1, residual $2; $3 is NULL.
	if got := kept(join.Inputs[1]); got[0] != true || got[1] != true || got[2] != true || got[3] != false {
		t.Errorf("right kept %v", got)
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
