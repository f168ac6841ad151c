package engine

import (
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream/agg"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// The wide property test's view shapes: every aggregate, outer joins with a
// residual condition and nullable keys, multi-column keys, top-N with
// OFFSET and ties, UNION ALL and UNION, DISTINCT and a three-deep chain of
// views. Table a is (k, v, hidden row id), b is (k primary key, w); the
// wide DML also writes NULL into a.k and updates rows in place.

type shapeFn = func(b *builder, a, bt *catalog.Relation, views map[string]*catalog.Relation) *plan.Node

var i64 = types.TInt64

func in64(i int) expr.Desc { return expr.Input(i, i64) }

func lit64(v int64) expr.Desc { return expr.Literal(v, i64) }

// typedA projects a to (k, v, v > 2, v::varchar, v::numeric, ',', row id).
func typedA(b *builder, a *catalog.Relation) *plan.Node {
	return b.project(b.scan(a), in64(0), in64(1),
		expr.Func(">", in64(1), lit64(2)),
		expr.Cast(in64(1), types.TVarchar),
		expr.Cast(in64(1), types.TDecimal),
		expr.Literal(",", types.TVarchar))
}

func call(k plan.AggKind, t types.Type, distinct bool, args ...int) plan.AggCall {
	return plan.AggCall{Kind: k, Args: args, Type: t, Distinct: distinct}
}

// joinRes is b.join with a residual condition over the concatenated row.
func (b *builder) joinRes(t plan.JoinType, l, r *plan.Node, lk, rk []int, res expr.Desc) *plan.Node {
	n := b.join(t, l, r, lk, rk)
	n.HashJoin.Residual = &res
	return n
}

// union is UNION ALL the way the planner builds it: each branch projects
// its columns, its branch number and one slot per branch's stream key
// column (NULL in the other branches' slots), which together are the
// union's stream key.
func (b *builder) union(cols int, branches ...*plan.Node) *plan.Node {
	var slots []types.Type
	for _, br := range branches {
		for _, k := range br.StreamKey {
			slots = append(slots, br.Schema[k])
		}
	}
	u := &plan.Node{Kind: plan.KindUnion}
	slot := 0
	for j, br := range branches {
		var exprs []expr.Desc
		for c := range cols {
			exprs = append(exprs, expr.Input(c, br.Schema[c]))
		}
		exprs = append(exprs, expr.Literal(int64(j), i64))
		for s, st := range slots {
			d := expr.Null(st)
			if s >= slot && s < slot+len(br.StreamKey) {
				d = expr.Input(br.StreamKey[s-slot], st)
			}
			exprs = append(exprs, d)
		}
		slot += len(br.StreamKey)
		p := b.rawProject(br, exprs, seqInts(len(exprs))[cols:])
		u.Inputs = append(u.Inputs, p)
		u.Schema = p.Schema
	}
	u.StreamKey = seqInts(len(u.Schema))[cols:]
	return u
}

// rawProject projects exprs with the given stream key, adding nothing.
func (b *builder) rawProject(in *plan.Node, exprs []expr.Desc, sk []int) *plan.Node {
	schema := make([]types.Type, len(exprs))
	for i, d := range exprs {
		e, err := expr.Build(d, in.Schema)
		if err != nil {
			b.err = err
			return in
		}
		schema[i] = e.Type()
	}
	return &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{in}, Schema: schema, StreamKey: sk,
		Project: &plan.Project{Exprs: exprs}}
}

// distinct keeps one row per value of keys, as SELECT DISTINCT does.
func (b *builder) distinct(in *plan.Node, keys []int) *plan.Node {
	l := agg.DistinctLayout(in.Schema, keys)
	t := b.table(l.Types, l.PK, seqInts(len(keys)))
	schema := make([]types.Type, len(keys))
	for i, k := range keys {
		schema[i] = in.Schema[k]
	}
	return &plan.Node{Kind: plan.KindDistinct, Inputs: []*plan.Node{in}, Schema: schema, StreamKey: seqInts(len(keys)),
		Distinct: &plan.Distinct{Keys: keys, Table: t}}
}

// keyed adds to a join's or a grouped top-N's stream key the columns its
// input was hash-distributed on (join keys, group keys). Without them an
// update that moves a row to another key reaches the next exchange as a
// delete from one actor and an insert from another under the same stream
// key, and the merge may deliver them in either order.
func keyed(n *plan.Node) *plan.Node {
	var add []int
	switch {
	case n.HashJoin != nil:
		add = slices.Clone(n.HashJoin.LeftKeys)
		for _, k := range n.HashJoin.RightKeys {
			add = append(add, len(n.Inputs[0].Schema)+k)
		}
	case n.TopN != nil:
		add = n.TopN.GroupKeys
	}
	for _, c := range add {
		if !slices.Contains(n.StreamKey, c) {
			n.StreamKey = append(n.StreamKey, c)
		}
	}
	return n
}

func withTies(n *plan.Node) *plan.Node {
	n.TopN.WithTies = true
	return n
}

func wideShapes() []viewShape {
	dec, vc, bo := types.TDecimal, types.TVarchar, types.TBool
	asc, desc := codec.Order{}, codec.Order{Desc: true, NullsFirst: true}
	return []viewShape{
		{name: "aggs", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return b.hashAgg(b.scan(a), []int{0}, call(plan.AggCount, i64, false, 1), call(plan.AggCount, i64, true, 1),
				call(plan.AggSum, dec, true, 1), call(plan.AggAvg, dec, false, 1), minOf(1, i64), maxOf(1, i64),
				call(plan.AggAvg, dec, true, 1))
		}},
		{name: "typedaggs", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			sa := call(plan.AggStringAgg, vc, false, 3, 5)
			sa.OrderBy = []plan.ColumnOrder{{Column: 1, Order: desc}}
			return b.hashAgg(typedA(b, a), []int{0}, call(plan.AggBoolAnd, bo, false, 2), call(plan.AggBoolOr, bo, false, 2),
				call(plan.AggStringAgg, vc, false, 3, 5), sa, call(plan.AggAvg, dec, false, 4), call(plan.AggSum, dec, true, 4),
				minOf(3, vc), maxOf(4, dec), call(plan.AggStringAgg, vc, true, 3, 5))
		}},
		{name: "globalaggs", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return b.simpleAgg(typedA(b, a), call(plan.AggCount, i64, true, 0), minOf(1, i64), maxOf(1, i64),
				call(plan.AggBoolAnd, bo, false, 2), call(plan.AggStringAgg, vc, false, 3, 5), call(plan.AggAvg, dec, false, 1))
		}},
		{name: "ljres", build: func(b *builder, a, bt *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return keyed(b.joinRes(leftJoin, b.scan(a), b.scan(bt), []int{1}, []int{1}, expr.Func("<=", in64(0), in64(3))))
		}},
		{name: "rjres", build: func(b *builder, a, bt *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return keyed(b.joinRes(rightJoin, b.scan(a), b.scan(bt), []int{1}, []int{1}, expr.Func("<=", in64(0), in64(3))))
		}},
		{name: "fjres", build: func(b *builder, a, bt *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return keyed(b.joinRes(fullJoin, b.scan(a), b.scan(bt), []int{1}, []int{1}, expr.Func("<>", in64(0), in64(3))))
		}},
		{name: "fjmulti", build: func(b *builder, a, bt *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return keyed(b.join(fullJoin, b.scan(a), b.scan(bt), []int{0, 1}, []int{0, 1}))
		}},
		{name: "topoff", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return b.topN(b.scan(a), nil, []plan.ColumnOrder{{Column: 1, Order: asc}}, 2, 2)
		}},
		{name: "topties", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return withTies(b.topN(b.scan(a), nil, []plan.ColumnOrder{{Column: 1, Order: desc}}, 2, 1))
		}},
		{name: "grouptopties", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return keyed(withTies(b.topN(b.scan(a), []int{0}, []plan.ColumnOrder{{Column: 1, Order: desc}}, 1, 1)))
		}},
		{name: "grouptopoff", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return keyed(b.topN(b.scan(a), []int{0}, []plan.ColumnOrder{{Column: 1, Order: asc}}, 2, 1))
		}},
		{name: "offsetonly", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return b.topN(b.scan(a), nil, []plan.ColumnOrder{{Column: 1, Order: desc}, {Column: 0, Order: asc}}, -1, 3)
		}},
		{name: "unionall", build: func(b *builder, a, bt *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			fa := b.filter(b.scan(a), expr.Func(">", in64(1), lit64(3)))
			return b.union(2, fa, b.scan(bt), b.scan(a))
		}},
		{name: "uniondistinct", build: func(b *builder, a, bt *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			l := b.rawProject(b.scan(a), []expr.Desc{in64(0), in64(1)}, []int{0, 1})
			r := b.rawProject(b.scan(bt), []expr.Desc{in64(0), in64(1)}, []int{0, 1})
			u := &plan.Node{Kind: plan.KindUnion, Inputs: []*plan.Node{l, r}, Schema: l.Schema, StreamKey: []int{0, 1}}
			return b.distinct(u, []int{0, 1})
		}},
		{name: "distinctv", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return b.distinct(b.scan(a), []int{1})
		}},
		{name: "deep1", build: func(b *builder, a, bt *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
			return keyed(b.joinRes(leftJoin, b.scan(a), b.scan(bt), []int{0}, []int{0}, expr.Func("<", in64(1), in64(4))))
		}},
		{name: "deep2", needs: "deep1", build: func(b *builder, _, _ *catalog.Relation, v map[string]*catalog.Relation) *plan.Node {
			return b.hashAgg(b.scan(v["deep1"]), []int{4}, countStar(), minOf(1, i64), maxOf(0, i64),
				call(plan.AggCount, i64, true, 1))
		}},
		{name: "deep3", needs: "deep2", build: func(b *builder, _, _ *catalog.Relation, v map[string]*catalog.Relation) *plan.Node {
			return withTies(b.topN(b.scan(v["deep2"]), nil, []plan.ColumnOrder{{Column: 1, Order: desc}}, 2, 0))
		}},
	}
}
