package planner

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/engine/refeval"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/types"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session is a minimal SQL session for tests: the planner in front of a
// real in-memory engine, batch queries recomputed by refeval over the
// committed snapshot.
type session struct {
	t   testing.TB
	ctx context.Context
	e   *engine.Engine
	p   *Planner
}

func newSession(t testing.TB) *session {
	t.Helper()
	// The whole test's deadline: TestViewsOverExistingData takes 10–16 s
	// alone under -race on 2 cores, and passed 60 s in a CI run sharing
	// the cores with other packages' tests and another process.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	e, err := engine.Open(ctx, engine.Options{InMemory: true, BarrierInterval: 5 * time.Millisecond, Parallelism: 2, ChunkSize: 16, CheckInserts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return &session{t: t, ctx: ctx, e: e, p: New(e.Catalog(), e)}
}

func (s *session) plan(sql string) (Result, error) {
	sts, err := parser.Parse(sql)
	if err != nil {
		return nil, err
	}
	if len(sts) != 1 {
		return nil, fmt.Errorf("want one statement, got %d", len(sts))
	}
	return s.p.Plan(s.ctx, &sts[0])
}

// exec runs a statement and fails the test on error.
func (s *session) exec(sql string) {
	s.t.Helper()
	if err := s.try(sql); err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
}

func (s *session) try(sql string) error {
	r, err := s.plan(sql)
	if err != nil {
		return err
	}
	switch r := r.(type) {
	case *CreateTable:
		_, err = s.e.CreateTable(s.ctx, r.Spec)
	case *CreateView:
		_, err = s.e.CreateMaterializedView(s.ctx, r.Spec)
	case *Drop:
		for _, n := range r.Names {
			if err = s.e.Drop(s.ctx, n, r.Cascade); err != nil {
				break
			}
		}
	case *Insert:
		rows := r.Rows
		if r.Query != nil {
			if rows, err = s.eval(r.Query); err != nil {
				return err
			}
		}
		err = s.write(r.Table, visibleTypes(r.Table), rows, nil, types.Insert)
	case *Delete:
		rows, err := s.eval(r.Query)
		if err != nil {
			return err
		}
		return s.write(r.Table, r.Table.Table.Types, rows, nil, types.Delete)
	case *Update:
		rows, err := s.eval(r.Query)
		if err != nil {
			return err
		}
		n := len(r.Table.Columns)
		var olds, news []types.Row
		for _, row := range rows {
			olds, news = append(olds, row[:n]), append(news, row[n:])
		}
		return s.write(r.Table, r.Table.Table.Types, olds, news, types.UpdateDelete)
	default:
		return fmt.Errorf("exec: unexpected %T", r)
	}
	return err
}

func visibleTypes(rel *catalog.Relation) []types.Type {
	var ts []types.Type
	for _, c := range rel.Columns {
		if !c.Hidden {
			ts = append(ts, c.Type)
		}
	}
	return ts
}

// write sends rows (and, for updates, their new versions) to a table.
func (s *session) write(rel *catalog.Relation, ts []types.Type, rows, news []types.Row, op types.Op) error {
	if len(rows) == 0 {
		return nil
	}
	cols := make([]types.Column, len(ts))
	for i, t := range ts {
		c, err := types.NewColumn(t, len(rows))
		if err != nil {
			return err
		}
		cols[i] = c
	}
	var ops []types.Op
	add := func(r types.Row, op types.Op) {
		for i := range ts {
			cols[i].Append(r[i])
		}
		ops = append(ops, op)
	}
	for i, r := range rows {
		add(r, op)
		if news != nil {
			add(news[i], types.UpdateInsert)
		}
	}
	return s.e.Write(s.ctx, rel.Name, types.NewChunk(cols, ops))
}

// eval runs a batch plan by recomputation over the committed snapshot.
func (s *session) eval(q *Query) ([]types.Row, error) {
	byID := map[uint32]string{}
	for _, r := range s.e.Catalog().All() {
		byID[r.Table.ID] = r.Name
	}
	rows, err := refeval.Eval(q.Plan, func(id uint32) ([]types.Row, error) { return s.e.Scan(s.ctx, byID[id]) })
	if err != nil {
		return nil, err
	}
	out := make([]types.Row, len(rows))
	for i, r := range rows {
		out[i] = r[:len(q.Columns)]
	}
	return out, nil
}

// query runs a batch SELECT and returns its rows formatted and sorted.
func (s *session) query(sql string) []string {
	s.t.Helper()
	r, err := s.plan(sql)
	if err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
	q := r.(*Query)
	if q.Limit >= 0 || q.Offset > 0 {
		// refeval's top-N applies the final ordering.
		top := *q
		top.Plan = &plan.Node{Kind: plan.KindTopN, Inputs: []*plan.Node{q.Plan}, Schema: q.Plan.Schema,
			TopN: &plan.TopN{OrderBy: q.OrderBy, Limit: q.Limit, Offset: q.Offset}}
		q = &top
	}
	rows, err := s.eval(q)
	if err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
	return format(rows, columnTypes(q.Columns), len(q.Columns))
}

// view returns a view's visible rows, formatted and sorted.
func (s *session) view(name string) []string {
	s.t.Helper()
	if err := s.e.Flush(s.ctx); err != nil {
		s.t.Fatal(err)
	}
	rel, ok := s.e.Catalog().ByName(name)
	if !ok {
		s.t.Fatalf("no view %s", name)
	}
	rows, err := s.e.Scan(s.ctx, name)
	if err != nil {
		s.t.Fatal(err)
	}
	return format(rows, rel.Table.Types, len(visibleTypes(rel)))
}

func columnTypes(cols []catalog.Column) []types.Type {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
}

func format(rows []types.Row, ts []types.Type, n int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = types.FormatRow(r[:n], ts[:n])
	}
	sort.Strings(out)
	return out
}

func sorted(rows ...string) []string {
	out := slices.Clone(rows)
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}
