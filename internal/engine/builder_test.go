package engine

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream/agg"
	"github.com/sluice-db/sluice/internal/stream/join"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// builder writes logical plans by hand, with state tables shaped as each
// executor requires: the stand-in for the SQL planner in engine tests.
type builder struct {
	ids  *IDBlock
	deps []uint32
	err  error
}

func newBuilder(ctx context.Context, e *Engine) *builder {
	ids, err := e.IDs(ctx, 256)
	return &builder{ids: ids, err: err}
}

func (b *builder) table(ts []types.Type, pk, dist []int) plan.Table {
	return plan.Table{ID: b.ids.Next(), Types: ts, PK: pk, DistKey: dist}
}

func (b *builder) scan(rel *catalog.Relation) *plan.Node {
	b.deps = append(b.deps, rel.ID)
	cols := make([]int, len(rel.Columns))
	for i := range cols {
		cols[i] = i
	}
	return &plan.Node{Kind: plan.KindBackfill, Schema: rel.Table.Types, StreamKey: rel.PK,
		Backfill: &plan.Backfill{Upstream: rel.Table, Columns: cols, ProgressTable: source.ProgressTable(b.ids.Next())}}
}

func (b *builder) filter(in *plan.Node, cond expr.Desc) *plan.Node {
	return &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{in}, Schema: in.Schema, StreamKey: in.StreamKey,
		Filter: &plan.Filter{Cond: cond}}
}

// project keeps the input's stream key columns at the end of the output
// when the expressions drop them.
func (b *builder) project(in *plan.Node, exprs ...expr.Desc) *plan.Node {
	var sk []int
	for _, k := range in.StreamKey {
		pos := slices.IndexFunc(exprs, func(d expr.Desc) bool { return d.Kind == expr.KindInput && d.Index == k })
		if pos < 0 {
			exprs = append(exprs, expr.Input(k, in.Schema[k]))
			pos = len(exprs) - 1
		}
		sk = append(sk, pos)
	}
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

const (
	innerJoin = plan.InnerJoin
	leftJoin  = plan.LeftJoin
	rightJoin = plan.RightJoin
	fullJoin  = plan.FullJoin
)

func (b *builder) sideTable(in *plan.Node, keys []int) plan.Table {
	pk := slices.Clone(keys)
	for _, k := range in.StreamKey {
		if !slices.Contains(pk, k) {
			pk = append(pk, k)
		}
	}
	return b.table(in.Schema, pk, keys)
}

func (b *builder) degreeTable(side plan.Table, nkeys int) *plan.Table {
	var ts []types.Type
	for _, c := range side.PK {
		ts = append(ts, side.Types[c])
	}
	ts = append(ts, types.TInt64)
	t := b.table(ts, seqInts(len(side.PK)), seqInts(nkeys))
	return &t
}

func seqInts(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// join outputs every column of both sides; its stream key is both sides'.
func (b *builder) join(t plan.JoinType, l, r *plan.Node, lk, rk []int) *plan.Node {
	out := seqInts(len(l.Schema) + len(r.Schema))
	sk := slices.Clone(l.StreamKey)
	for _, k := range r.StreamKey {
		sk = append(sk, len(l.Schema)+k)
	}
	hj := &plan.HashJoin{Type: t, LeftKeys: lk, RightKeys: rk, Output: out,
		LeftTable: b.sideTable(l, lk), RightTable: b.sideTable(r, rk)}
	if t == leftJoin || t == fullJoin {
		hj.LeftDegreeTable = b.degreeTable(hj.LeftTable, len(lk))
	}
	if t == rightJoin || t == fullJoin {
		hj.RightDegreeTable = b.degreeTable(hj.RightTable, len(rk))
	}
	pending := join.PendingTable()
	pending.ID = b.ids.Next()
	hj.PendingTable = &pending
	return &plan.Node{Kind: plan.KindHashJoin, Inputs: []*plan.Node{l, r}, Schema: slices.Concat(l.Schema, r.Schema),
		StreamKey: sk, HashJoin: hj}
}

func countStar() plan.AggCall { return plan.AggCall{Kind: plan.AggCountStar, Type: types.TInt64} }

func sumOf(col int) plan.AggCall {
	return plan.AggCall{Kind: plan.AggSum, Args: []int{col}, Type: types.TDecimal}
}

func minOf(col int, t types.Type) plan.AggCall {
	return plan.AggCall{Kind: plan.AggMin, Args: []int{col}, Type: t}
}

func maxOf(col int, t types.Type) plan.AggCall {
	return plan.AggCall{Kind: plan.AggMax, Args: []int{col}, Type: t}
}

func (b *builder) aggNode(kind plan.Kind, in *plan.Node, groups []int, calls ...plan.AggCall) *plan.Node {
	for i := range calls {
		if l, ok := agg.CallLayout(in.Schema, groups, calls[i]); ok {
			t := b.table(l.Types, l.PK, seqInts(len(groups)))
			t.Orders = l.Orders
			calls[i].Table = &t
		}
	}
	l := agg.ResultLayout(in.Schema, groups, calls)
	res := b.table(l.Types, l.PK, seqInts(len(groups)))
	res.Orders = l.Orders
	schema := make([]types.Type, 0, len(groups)+len(calls))
	for _, g := range groups {
		schema = append(schema, in.Schema[g])
	}
	for _, c := range calls {
		schema = append(schema, c.Type)
	}
	return &plan.Node{Kind: kind, Inputs: []*plan.Node{in}, Schema: schema, StreamKey: seqInts(len(groups)),
		Agg: &plan.Agg{GroupKeys: groups, Calls: calls, ResultTable: res}}
}

func (b *builder) simpleAgg(in *plan.Node, calls ...plan.AggCall) *plan.Node {
	return b.aggNode(plan.KindSimpleAgg, in, nil, calls...)
}

func (b *builder) hashAgg(in *plan.Node, groups []int, calls ...plan.AggCall) *plan.Node {
	return b.aggNode(plan.KindHashAgg, in, groups, calls...)
}

// topN orders by the given columns (ASC or DESC) within groups.
func (b *builder) topN(in *plan.Node, groups []int, by []plan.ColumnOrder, limit, offset int64) *plan.Node {
	pk := slices.Clone(groups)
	var orders []codec.Order
	for range groups {
		orders = append(orders, codec.Order{})
	}
	var keptBy []plan.ColumnOrder
	for _, o := range by {
		if !slices.Contains(pk, o.Column) {
			pk = append(pk, o.Column)
			orders = append(orders, o.Order)
			keptBy = append(keptBy, o)
		}
	}
	for _, k := range in.StreamKey {
		if !slices.Contains(pk, k) {
			pk = append(pk, k)
			orders = append(orders, codec.Order{})
		}
	}
	t := b.table(in.Schema, pk, groups)
	t.Orders = orders
	return &plan.Node{Kind: plan.KindTopN, Inputs: []*plan.Node{in}, Schema: in.Schema, StreamKey: in.StreamKey,
		TopN: &plan.TopN{OrderBy: keptBy, Limit: limit, Offset: offset, GroupKeys: groups, Table: t}}
}

// view describes a materialized view over n named by names.
func (b *builder) view(name string, n *plan.Node, names []string) ViewSpec {
	cols := make([]catalog.Column, len(n.Schema))
	for i, t := range n.Schema {
		cols[i] = catalog.Column{Name: names[i], Type: t}
	}
	return ViewSpec{Name: name, Columns: cols, Plan: n, PK: n.StreamKey, DependsOn: b.deps}
}

func numeric(v int64) types.Datum {
	d, err := types.ParseDatum(types.FormatDatum(v, types.TInt64), types.TDecimal)
	if err != nil {
		panic(err)
	}
	return d
}

func openTest(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := Open(context.Background(), Options{Dir: dir, BarrierInterval: 20e6, Parallelism: 2, ChunkSize: 64, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// testLogger logs to stderr when SLUICE_TEST_LOG is set (debugging a
// failing run); otherwise it discards.
func testLogger() *slog.Logger {
	if os.Getenv("SLUICE_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}
