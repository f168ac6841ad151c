package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/engine/refeval"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memReader serves hand-built tables by id.
type memReader map[uint32][]types.Row

type sliceIter struct{ rows []types.Row }

func (it *sliceIter) Next() (types.Row, bool, error) {
	if len(it.rows) == 0 {
		return nil, false, nil
	}
	r := it.rows[0]
	it.rows = it.rows[1:]
	return r, true, nil
}
func (it *sliceIter) Close() error { return nil }

func (m memReader) ScanTable(_ context.Context, d storage.TableDesc) (storage.Iterator, error) {
	return &sliceIter{rows: m[d.ID]}, nil
}

// Scan returns the rows whose key columns start with pkPrefix.
func (m memReader) Scan(_ context.Context, d storage.TableDesc, pkPrefix types.Row) (storage.Iterator, error) {
	var rows []types.Row
	for _, r := range m[d.ID] {
		match := true
		for i, v := range pkPrefix {
			if types.Compare(r[d.PK[i]], v) != 0 {
				match = false
			}
		}
		if match {
			rows = append(rows, r)
		}
	}
	return &sliceIter{rows: rows}, nil
}

// ScanRange returns the rows of the prefix whose next key column is in
// [lo, hi] (each end inclusive or not).
func (m memReader) ScanRange(ctx context.Context, d storage.TableDesc, pkPrefix types.Row, lo, hi *storage.Bound) (storage.Iterator, error) {
	it, _ := m.Scan(ctx, d, pkPrefix)
	var rows []types.Row
	col := d.PK[len(pkPrefix)]
	for _, r := range it.(*sliceIter).rows {
		if lo != nil && (r[col] == nil || types.Compare(r[col], lo.Value) < 0 || !lo.Inclusive && types.Compare(r[col], lo.Value) == 0) {
			continue
		}
		if hi != nil && (r[col] == nil || types.Compare(r[col], hi.Value) > 0 || !hi.Inclusive && types.Compare(r[col], hi.Value) == 0) {
			continue
		}
		rows = append(rows, r)
	}
	return &sliceIter{rows: rows}, nil
}

var i64 = types.TInt64

func scanNode(id uint32, ts []types.Type) *plan.Node {
	cols := make([]int, len(ts))
	for i := range cols {
		cols[i] = i
	}
	return &plan.Node{Kind: plan.KindBackfill, Schema: ts, StreamKey: []int{0},
		Backfill: &plan.Backfill{Upstream: plan.Table{ID: id, Types: ts, PK: []int{0}}, Columns: cols}}
}

func runAll(t *testing.T, r Reader, q Query) ([]types.Row, error) {
	t.Helper()
	var out []types.Row
	err := Run(context.Background(), r, q, Options{ChunkSize: 3}, func(row types.Row) error {
		out = append(out, row)
		return nil
	})
	return out, err
}

func fmtRows(rows []types.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r...)
	}
	return out
}

// TestHandBuiltJoinOrderLimit joins two hand-built tables (a full join
// with a residual), then orders, offsets and limits, and cuts a hidden
// column.
func TestHandBuiltJoinOrderLimit(t *testing.T) {
	ts := []types.Type{i64, i64}
	r := memReader{
		1: {{int64(1), int64(10)}, {int64(2), int64(20)}, {int64(3), nil}},
		2: {{int64(1), int64(5)}, {int64(1), int64(50)}, {int64(4), int64(7)}},
	}
	res := expr.Func(">", expr.Input(3, i64), expr.Input(1, i64))
	j := &plan.Node{Kind: plan.KindHashJoin, Inputs: []*plan.Node{scanNode(1, ts), scanNode(2, ts)},
		Schema: []types.Type{i64, i64, i64},
		HashJoin: &plan.HashJoin{Type: plan.FullJoin, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: &res,
			Output: []int{0, 2, 3}}}
	// ORDER BY column 2 (hidden) DESC NULLS FIRST, then column 1.
	q := Query{Plan: j, Visible: 2, Limit: 3, Offset: 1,
		OrderBy: []plan.ColumnOrder{{Column: 2, Order: codec.Order{Desc: true, NullsFirst: true}}, {Column: 1}}}
	rows, err := runAll(t, r, q)
	if err != nil {
		t.Fatal(err)
	}
	// Join rows (left id, right id, right v): (1,1,50) matches the residual;
	// left 2 and 3 are unmatched (NULL pads); right (1,5) and (4,7) are
	// unmatched. By v DESC NULLS FIRST, then right id: (2,NULL,NULL),
	// (3,NULL,NULL) — stable in probe order — then 50, 7, 5. OFFSET 1
	// LIMIT 3 keeps (3,NULL), (1,1), (NULL,4); v is cut off.
	got := fmtRows(rows)
	if len(got) != 3 || rows[0][0] != int64(3) || rows[1][0] != int64(1) || rows[2][1] != int64(4) || len(rows[0]) != 2 {
		t.Fatalf("got %q", got)
	}
}

func TestStrictDivisionByZero(t *testing.T) {
	v := &plan.Node{Kind: plan.KindValues, Schema: []types.Type{i64},
		Values: &plan.Values{Rows: [][]expr.Desc{{expr.Literal(int64(1), i64)}, {expr.Literal(int64(0), i64)}}}}
	p := &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{v}, Schema: []types.Type{i64},
		Project: &plan.Project{Exprs: []expr.Desc{expr.Func("/", expr.Literal(int64(10), i64), expr.Input(0, i64))}}}
	_, err := runAll(t, memReader{}, Query{Plan: p, Visible: 1, Limit: -1})
	if sqlerr.CodeOf(err) != sqlerr.DivisionByZero {
		t.Fatalf("want 22012, got %v", err)
	}
	// A filter that hides the bad row first makes the query succeed.
	f := &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{v}, Schema: []types.Type{i64},
		Filter: &plan.Filter{Cond: expr.Func("<>", expr.Input(0, i64), expr.Literal(int64(0), i64))}}
	p.Inputs[0] = f
	rows, err := runAll(t, memReader{}, Query{Plan: p, Visible: 1, Limit: -1})
	if err != nil || len(rows) != 1 || rows[0][0] != int64(10) {
		t.Fatalf("got %v, %v", rows, err)
	}
}

func TestCancelStopsScan(t *testing.T) {
	var rows []types.Row
	for i := range 10000 {
		rows = append(rows, types.Row{int64(i), int64(i)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := Run(ctx, memReader{1: rows}, Query{Plan: scanNode(1, []types.Type{i64, i64}), Visible: 2, Limit: -1},
		Options{ChunkSize: 100}, func(types.Row) error {
			if n++; n == 150 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) || n > 200 {
		t.Fatalf("err %v after %d rows", err, n)
	}
}

func TestLimitStopsEarly(t *testing.T) {
	var rows []types.Row
	for i := range 1000 {
		rows = append(rows, types.Row{int64(i), int64(i)})
	}
	got, err := runAll(t, memReader{1: rows}, Query{Plan: scanNode(1, []types.Type{i64, i64}), Visible: 1, Limit: 2, Offset: 5})
	if err != nil || len(got) != 2 || got[0][0] != int64(5) || len(got[0]) != 1 {
		t.Fatalf("got %v %v", got, err)
	}
}

// fixture is a real in-memory engine with the planner in front of it.
type fixture struct {
	t   *testing.T
	ctx context.Context
	e   *engine.Engine
	p   *planner.Planner
}

func newFixture(t *testing.T) *fixture {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	e, err := engine.Open(ctx, engine.Options{InMemory: true, BarrierInterval: 5 * time.Millisecond, Parallelism: 2, ChunkSize: 16, CheckInserts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return &fixture{t: t, ctx: ctx, e: e, p: planner.New(e.Catalog(), e)}
}

func (f *fixture) plan(sql string) planner.Result {
	f.t.Helper()
	sts, err := parser.Parse(sql)
	if err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	r, err := f.p.Plan(f.ctx, &sts[0])
	if err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return r
}

func (f *fixture) exec(sql string) {
	f.t.Helper()
	switch r := f.plan(sql).(type) {
	case *planner.CreateTable:
		if _, err := f.e.CreateTable(f.ctx, r.Spec); err != nil {
			f.t.Fatal(err)
		}
	case *planner.Insert:
		var ts []types.Type
		for _, c := range r.Table.Columns {
			if !c.Hidden {
				ts = append(ts, c.Type)
			}
		}
		b := types.NewBuilder(ts, len(r.Rows)+1)
		for _, row := range r.Rows {
			b.Append(types.Insert, row)
		}
		if err := f.e.Write(f.ctx, r.Table.Name, b.Take()); err != nil {
			f.t.Fatal(err)
		}
	default:
		f.t.Fatalf("unexpected %T", r)
	}
}

// snapshot flushes the tables and pins a snapshot of them for the test.
func (f *fixture) snapshot() *storage.Snapshot {
	f.t.Helper()
	if err := f.e.Flush(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	sn, err := f.e.Store().Snapshot()
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { sn.Close() })
	return sn
}

// query plans sql and runs it over sn with opts, returning its rows as
// text in the order produced.
func (f *fixture) query(sn Reader, sql string, opts Options) ([]string, error) {
	f.t.Helper()
	q := f.plan(sql).(*planner.Query)
	ts := columnTypes(q.Columns)
	var got []string
	err := Run(f.ctx, sn, Query{Plan: q.Plan, Visible: len(q.Columns), OrderBy: q.OrderBy, Limit: q.Limit, Offset: q.Offset},
		opts, func(r types.Row) error {
			got = append(got, types.FormatRow(r, ts))
			return nil
		})
	return got, err
}

func columnTypes(cols []catalog.Column) []types.Type {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
}

// TestAgainstOracle runs queries through the planner and compares the
// batch executor with refeval's recomputation over the same snapshot.
func TestAgainstOracle(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE t1 (id int PRIMARY KEY, g int, v int, d numeric, s varchar)")
	f.exec("CREATE TABLE t2 (id int, name varchar)")
	f.exec("INSERT INTO t1 VALUES (1, 1, 10, 1.5, 'a'), (2, 1, 20, 2.25, 'b'), (3, 2, 30, NULL, 'c'), (4, NULL, 40, 3, NULL), (5, 2, NULL, 0.1, 'e')")
	f.exec("INSERT INTO t2 VALUES (1, 'x'), (2, 'y'), (2, 'y2'), (7, 'z'), (NULL, 'n')")
	queries := []string{
		"SELECT * FROM t1",
		"SELECT t1.id, t2.name FROM t1 JOIN t2 ON t1.id = t2.id",
		"SELECT t1.id, t2.name FROM t1 LEFT JOIN t2 ON t1.id = t2.id AND t2.name <> 'y'",
		"SELECT t1.id, t2.id, t2.name FROM t1 RIGHT JOIN t2 ON t1.id = t2.id",
		"SELECT t1.id, t2.id FROM t1 FULL JOIN t2 ON t1.id = t2.id",
		"SELECT g, count(*), count(v), sum(v), min(s), max(v), sum(d) FROM t1 GROUP BY g",
		"SELECT count(*), count(DISTINCT g), sum(v) FILTER (WHERE v > 10), bool_and(v > 5), bool_or(v > 35) FROM t1",
		"SELECT count(*), sum(v), min(v) FROM t1 WHERE id > 100",
		"SELECT DISTINCT g FROM t1",
		"SELECT id FROM t1 UNION ALL SELECT id FROM t2",
		"SELECT id FROM t1 UNION SELECT id FROM t2",
		"SELECT g, sum(v) FROM t1 GROUP BY g HAVING count(*) > 1",
		"SELECT s.g, s.total FROM (SELECT g, sum(v) AS total FROM t1 GROUP BY g) s WHERE s.total > 30",
		"SELECT id, CASE WHEN v > 15 THEN 'big' ELSE 'small' END, coalesce(g, 0) * 2 FROM t1",
	}
	sn := f.snapshot()
	byID := map[uint32]string{}
	for _, r := range f.e.Catalog().All() {
		byID[r.Table.ID] = r.Name
	}
	for _, sql := range queries {
		got, err := f.query(sn, sql, Options{ChunkSize: 2})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		q := f.plan(sql).(*planner.Query)
		ts := columnTypes(q.Columns)
		rows, err := refeval.Eval(q.Plan, func(id uint32) ([]types.Row, error) { return f.e.Scan(f.ctx, byID[id]) })
		if err != nil {
			t.Fatalf("%s: oracle: %v", sql, err)
		}
		var want []string
		for _, r := range rows {
			want = append(want, types.FormatRow(r[:len(q.Columns)], ts))
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s:\n got  %q\n want %q", sql, got, want)
		}
	}
}

// TestOrderByThroughPlanner checks the final ORDER BY/LIMIT and numeric
// avg scale against Postgres's answers.
func TestOrderByThroughPlanner(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE t (a int, b bigint)")
	f.exec("INSERT INTO t VALUES (3, 1), (1, 2), (NULL, 2), (2, 4)")
	sn := f.snapshot()
	cases := map[string][]string{
		"SELECT a FROM t ORDER BY a":                          {"1", "2", "3", "NULL"},
		"SELECT a FROM t ORDER BY a DESC LIMIT 2":             {"NULL", "3"},
		"SELECT a FROM t ORDER BY b DESC, a LIMIT 2 OFFSET 1": {"1", "NULL"},
		"SELECT avg(b), sum(b), avg(a) FROM t":                {"2.2500000000000000 9 2.0000000000000000"},
	}
	for sql, want := range cases {
		got, err := f.query(sn, sql, Options{})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: got %q (%v), want %q", sql, got, err, want)
		}
	}
}
