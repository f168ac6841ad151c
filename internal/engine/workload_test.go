package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// The crash workload: t(k, v) without a primary key (keyed by the hidden
// row id the engine assigns, so an id handed out twice after a crash makes
// one row overwrite another), u(k, w) with one, a view s of count and sum
// over t, and a view j joining t and u on k. writeOne is the sequential
// writer of the actor-failure test; the crash test's concurrent writers
// are in crash_child_test.go.

func setupWorkload(ctx context.Context, e *Engine) error {
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	t, ok := e.Catalog().ByName("t")
	if !ok {
		var err error
		if t, err = e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii}); err != nil {
			return err
		}
	}
	u, ok := e.Catalog().ByName("u")
	if !ok {
		var err error
		uc := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "w", Type: types.TInt64}}
		if u, err = e.CreateTable(ctx, TableSpec{Name: "u", Columns: uc, PK: []int{0}}); err != nil {
			return err
		}
	}
	if _, ok := e.Catalog().ByName("s"); !ok {
		b := newBuilder(ctx, e)
		sv := b.simpleAgg(b.scan(t), countStar(), sumOf(1))
		if _, err := e.CreateMaterializedView(ctx, b.view("s", sv, []string{"n", "total"})); err != nil {
			return err
		}
	}
	if _, ok := e.Catalog().ByName("j"); !ok {
		b := newBuilder(ctx, e)
		jv := b.join(innerJoin, b.scan(t), b.scan(u), []int{0}, []int{0})
		if _, err := e.CreateMaterializedView(ctx, b.view("j", jv, []string{"tk", "v", "rid", "uk", "w"})); err != nil {
			return err
		}
	}
	return nil
}

// checkWorkload verifies t holds each acknowledged key exactly once (and
// no key twice), and that s and j equal a recomputation from t and u.
func checkWorkload(ctx context.Context, e *Engine, acked map[int64]bool) error {
	t, err := e.Scan(ctx, "t")
	if err != nil {
		return err
	}
	seen := map[int64]int{}
	for _, r := range t {
		k := r[0].(int64)
		seen[k]++
		if seen[k] > 1 {
			return fmt.Errorf("key %d duplicated in t", k)
		}
	}
	for k := range acked {
		if seen[k] == 0 {
			return fmt.Errorf("acknowledged key %d lost", k)
		}
	}
	return checkViewsOn(ctx, e, t)
}

// checkViews checks s and j against a recomputation from t and u.
func checkViews(ctx context.Context, e *Engine) error {
	t, err := e.Scan(ctx, "t")
	if err != nil {
		return err
	}
	return checkViewsOn(ctx, e, t)
}

func checkViewsOn(ctx context.Context, e *Engine, t []types.Row) error {
	if n := e.InconsistentOps(); n != 0 {
		return fmt.Errorf("%d inconsistent changes reached the views' materializes", n)
	}
	var sum int64
	for _, r := range t {
		sum += r[1].(int64)
	}
	s, err := e.Scan(ctx, "s")
	if err != nil {
		return err
	}
	// sum over no rows is NULL, also once every row was deleted again.
	var want types.Datum
	if len(t) > 0 {
		want = numeric(sum)
	}
	if len(s) != 1 || s[0][0] != int64(len(t)) || types.Compare(s[0][1], want) != 0 {
		return fmt.Errorf("s = %v, want count %d sum %v", s, len(t), want)
	}
	return checkJoin(ctx, e, t)
}

// scanWorkload reads t as (k, v, row id) and u as (k, w, 0).
func scanWorkload(ctx context.Context, e *Engine) (tRows, uRows [][3]int64, err error) {
	for _, tbl := range []string{"t", "u"} {
		rows, err := e.Scan(ctx, tbl)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range rows {
			x := [3]int64{r[0].(int64), r[1].(int64)}
			if tbl == "t" {
				x[2] = r[2].(int64)
				tRows = append(tRows, x)
			} else {
				uRows = append(uRows, x)
			}
		}
	}
	return tRows, uRows, nil
}

func checkJoin(ctx context.Context, e *Engine, t []types.Row) error {
	u, err := e.Scan(ctx, "u")
	if err != nil {
		return err
	}
	w := map[int64]int64{}
	for _, r := range u {
		w[r[0].(int64)] = r[1].(int64)
	}
	var want []string
	for _, r := range t {
		if x, ok := w[r[0].(int64)]; ok {
			want = append(want, fmt.Sprint(r[0], r[1], r[2], r[0], x))
		}
	}
	j, err := e.Scan(ctx, "j")
	if err != nil {
		return err
	}
	var got []string
	for _, r := range j {
		got = append(got, fmt.Sprint(r...))
	}
	sort.Strings(want)
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("j has %d rows, recomputation %d\n got %v\nwant %v", len(got), len(want), head(got), head(want))
	}
	return nil
}

func head(s []string) []string { return s[:min(len(s), 10)] }

// writeOne inserts (k, k) into t and upserts (k/2, k) into u, or deletes
// u's row k/3 every fifth key.
func writeOne(ctx context.Context, e *Engine, k int64) error {
	ii := []types.Type{types.TInt64, types.TInt64}
	if err := e.Write(ctx, "t", types.MustParseChunk(ii, fmt.Sprintf("+ %d %d", k, k))); err != nil {
		return err
	}
	op := fmt.Sprintf("+ %d %d", k/2, k)
	if k%5 == 0 {
		op = fmt.Sprintf("- %d 0", k/3)
	}
	return e.Write(ctx, "u", types.MustParseChunk(ii, op))
}

func TestWorkloadInProcess(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	if err := setupWorkload(ctx, e); err != nil {
		t.Fatal(err)
	}
	acked := map[int64]bool{}
	for k := int64(1); k <= 200; k++ {
		if err := writeOne(ctx, e, k); err != nil {
			t.Fatal(err)
		}
		acked[k] = true
		if k%50 == 0 {
			if err := e.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := checkWorkload(ctx, e, acked); err != nil {
				t.Fatalf("after %d writes: %v", k, err)
			}
		}
	}
	rel, _ := e.Catalog().ByName("t")
	waitFor(t, "the DML log truncated behind committed epochs", func() bool {
		recs, err := e.Store().ReadDML(rel.Table.ID, 1, 1)
		return err == nil && (len(recs) == 0 || recs[0].Seq > 100)
	})
}

// TestCrashWorkloadInProcess runs the crash test's concurrent writers with
// no crash: the tables must equal the tracker's model exactly and the
// views a recomputation, which checks the workload and its checker.
func TestCrashWorkloadInProcess(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	if err := setupWorkload(ctx, e); err != nil {
		t.Fatal(err)
	}
	tr := newTracker()
	var mu sync.Mutex
	var lineErr error
	emit := func(l string) {
		mu.Lock()
		defer mu.Unlock()
		if err := tr.line(l); err != nil && lineErr == nil {
			lineErr = err
		}
	}
	for round := range 3 {
		ws, err := newCrashWriters(ctx, e, round, emit)
		if err != nil {
			t.Fatal(err)
		}
		if err := runCrashWriters(ctx, e, ws, 30); err != nil {
			t.Fatal(err)
		}
		if lineErr != nil {
			t.Fatal(lineErr)
		}
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		tRows, uRows, err := scanWorkload(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.resolve(observe(tRows, uRows)); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := checkViews(ctx, e); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if m := tr.total(); tr.stmts != 3*30*crashWriters || len(m.t) == 0 || len(m.u) == 0 {
		t.Fatalf("%d statements acknowledged, t %d rows, u %d rows", tr.stmts, len(m.t), len(m.u))
	}
}
