package build_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/task"
	"go.uber.org/goleak"
	"pgregory.net/rapid"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// seedViews cover every executor kind the planner emits, so mutations
// start from each builder's valid input.
var seedViews = []string{
	`SELECT a, b + 1 AS b1, upper(c) AS c FROM t WHERE b > 0`,
	`SELECT t.a, u.y FROM t JOIN u ON t.b = u.x AND t.a < u.y`,
	`SELECT t.a, u.y FROM t LEFT JOIN u ON t.b = u.x`,
	`SELECT t.a, u.y FROM t FULL JOIN u ON t.b = u.x`,
	`SELECT b, count(*) AS n, sum(a) AS s, min(c) AS m, string_agg(c, ',' ORDER BY a) AS sa, count(DISTINCT a) AS d FROM t GROUP BY b`,
	`SELECT count(*) AS n, max(b) AS m, bool_and(a > 0) AS ba FROM t`,
	`SELECT a, b FROM t ORDER BY b DESC LIMIT 3 OFFSET 1`,
	`SELECT DISTINCT b FROM t`,
	`SELECT a AS k FROM t UNION ALL SELECT x FROM u`,
	`SELECT * FROM (VALUES (1, 'x'), (2, 'y')) AS v(p, q)`,
}

// seedPlans plans the seed views against a real catalog. It returns the
// logical plans (each topped by materialize, as the engine does) and the
// roots of the fragments Fragmentize cuts them into.
func seedPlans(t *testing.T) (logical, fragments []*plan.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := engine.Open(ctx, engine.Options{InMemory: true, BarrierInterval: 10 * time.Millisecond, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	p := planner.New(e.Catalog(), e)
	planOne := func(sql string) planner.Result {
		sts, err := parser.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Plan(ctx, &sts[0])
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return r
	}
	for _, ddl := range []string{
		`CREATE TABLE t (a int PRIMARY KEY, b int, c text)`,
		`CREATE TABLE u (x int PRIMARY KEY, y bigint)`,
	} {
		if _, err := e.CreateTable(ctx, planOne(ddl).(*planner.CreateTable).Spec); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range seedViews {
		r := planOne(`CREATE MATERIALIZED VIEW v` + string(rune('a'+i)) + ` AS ` + v)
		root := r.(*planner.CreateView).Spec.Plan
		// The engine tops a view with materialize; so do the seeds.
		top := &plan.Node{Kind: plan.KindMaterialize, Inputs: []*plan.Node{root},
			Schema: root.Schema, StreamKey: root.StreamKey,
			Materialize: &plan.Materialize{Table: plan.Table{ID: 9000 + uint32(i), Types: root.Schema, PK: root.StreamKey, DistKey: root.StreamKey}}}
		logical = append(logical, top)
		job, err := plan.Fragmentize(uint32(100+i), cloneNode(t, top), fragmentOptions(2))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		for _, f := range job.Fragments {
			fragments = append(fragments, f.Root)
		}
	}
	return logical, fragments
}

func fragmentOptions(par int) plan.FragmentOptions {
	next := uint32(0)
	return plan.FragmentOptions{Parallelism: par,
		NextFragmentID: func() uint32 { next++; return next },
		Upstream: func(uint32) (plan.Upstream, error) {
			return plan.Upstream{Fragment: 1000, Parallelism: par}, nil
		}}
}

type fataler interface{ Fatal(args ...any) }

func cloneNode(t fataler, n *plan.Node) *plan.Node {
	b, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	var out plan.Node
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestBuildMalformedPlansNeverPanic mutates valid fragment plans (one to
// three reflective edits: out-of-range and negative indexes, unknown type
// ids and node kinds, truncated or grown slices, missing or empty
// descriptions), builds each as an actor and, if the builder accepts it,
// runs it over a few epochs of sample data. Nothing may panic: not the
// builder, not the chain, not an input pump. build.Actor and the actor's
// goroutine recover panics as a backstop; a recovered panic still fails
// this test, because a panicking actor fails, recovers and panics again
// forever, and a panic mid-build may leave half a chain behind.
func TestBuildMalformedPlansNeverPanic(t *testing.T) {
	_, plans := seedPlans(t)
	store, err := storage.Open(context.Background(), storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	seedRows := 0
	for i, p := range plans {
		res := tryRun(store, p)
		if res.err != nil {
			t.Fatalf("seed fragment %d does not run: %v", i, res.err)
		}
		seedRows += res.rows
	}
	// The sample data must reach the executors, or the run half of the
	// test checks nothing.
	if seedRows == 0 {
		t.Fatal("no seed fragment put out a row")
	}
	runs, rejected, ran, rows := 0, 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		root := cloneNode(rt, rapid.SampledFrom(plans).Draw(rt, "seed"))
		mutateTree(rt, root)
		res := tryRun(store, root)
		if res.panic != nil {
			plan, _ := json.Marshal(root)
			rt.Fatalf("panic (built=%v): %v\n%s\nplan: %s", res.built, res.panic.Value, res.panic.Stack, plan)
		}
		if !res.built {
			rejected++
		} else if res.err == nil {
			ran++
			rows += res.rows
		}
		runs++
	})
	// Most mutations must be caught; a mutator that only touches fields
	// the builders ignore would pass vacuously.
	t.Logf("%d mutated plans: %d rejected by the builder, %d ran all epochs (%d rows out); seeds put out %d rows",
		runs, rejected, ran, rows, seedRows)
	if runs > 50 && rejected < runs/4 {
		t.Fatalf("only %d of %d mutated plans rejected: the mutator is too mild", rejected, runs)
	}
}

// TestFragmentizeMalformedPlansNeverPanic: plan.Fragmentize, the other
// consumer of a planner's tree, answers a mutated logical plan with an
// error or a job, never a panic.
func TestFragmentizeMalformedPlansNeverPanic(t *testing.T) {
	logical, _ := seedPlans(t)
	store, err := storage.Open(context.Background(), storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	rapid.Check(t, func(rt *rapid.T) {
		root := cloneNode(rt, rapid.SampledFrom(logical).Draw(rt, "seed"))
		mutateTree(rt, root)
		b, _ := json.Marshal(root)
		var job *plan.Job
		err := task.Run(context.Background(), "fragmentize", func(context.Context) error {
			var err error
			job, err = plan.Fragmentize(1, root, fragmentOptions(rapid.IntRange(0, 4).Draw(rt, "parallelism")))
			return err
		})
		var pe *task.PanicError
		if errors.As(err, &pe) {
			rt.Fatalf("Fragmentize panicked: %v\n%s\nplan: %s", pe.Value, pe.Stack, b)
		}
		if err != nil {
			return
		}
		// What Fragmentize accepts goes on to the builder: the whole path
		// from a planner's tree to running actors.
		for _, f := range job.Fragments {
			if res := tryRun(store, f.Root); res.panic != nil {
				rt.Fatalf("fragment %d panicked (built=%v): %v\n%s\nplan: %s", f.ID, res.built, res.panic.Value, res.panic.Stack, b)
			}
		}
	})
}
