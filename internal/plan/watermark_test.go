package plan

import (
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

func TestDeriveStreamProps(t *testing.T) {
	i64 := types.TInt64
	src := func() *Node {
		c := &Node{Kind: KindConnectorSource, Schema: []types.Type{i64, i64}}
		return &Node{Kind: KindWatermarkFilter, Inputs: []*Node{c}, Schema: c.Schema,
			WatermarkFilter: &WatermarkFilter{Col: 1, Expr: expr.Input(1, i64)}}
	}
	plain := &Node{Kind: KindBackfill, Schema: []types.Type{i64, i64}}
	proj := &Node{Kind: KindProject, Inputs: []*Node{src()}, Project: &Project{Exprs: []expr.Desc{
		expr.Input(0, i64), expr.Func("-", expr.Input(1, i64), expr.Literal(int64(3), i64)),
		expr.Func("-", expr.Literal(int64(3), i64), expr.Input(1, i64))}}}
	agg := &Node{Kind: KindHashAgg, Inputs: []*Node{proj}, Agg: &Agg{GroupKeys: []int{0, 1}}}
	join := func(jt JoinType, right *Node) *Node {
		return &Node{Kind: KindHashJoin, Inputs: []*Node{src(), right}, HashJoin: &HashJoin{Type: jt,
			LeftKeys: []int{0, 1}, RightKeys: []int{0, 1}, Output: []int{3, 2, 1, 0}}}
	}
	union := &Node{Kind: KindUnion, Inputs: []*Node{src(), plain}}
	cases := []struct {
		n      *Node
		want   []int
		append bool
	}{
		{proj, []int{1}, true},
		{agg, []int{1}, false},
		{join(InnerJoin, src()), []int{0, 2}, true},
		{join(LeftJoin, src()), nil, false},
		{join(InnerJoin, plain), nil, false},
		{union, nil, false},
		{&Node{Kind: KindUnion, Inputs: []*Node{src(), src()}}, []int{1}, true},
		{&Node{Kind: KindTopN, Inputs: []*Node{src()}, TopN: &TopN{}}, nil, false},
	}
	for i, c := range cases {
		DeriveStreamProps(c.n)
		if !slices.Equal(c.n.Watermarks, c.want) || c.n.AppendOnly != c.append {
			t.Errorf("case %d (%s): watermarks %v append-only %v, want %v %v", i, c.n.Kind, c.n.Watermarks, c.n.AppendOnly, c.want, c.append)
		}
	}
}
