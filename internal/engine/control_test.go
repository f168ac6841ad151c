package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

var kv = []types.Type{types.TInt64, types.TInt64}

func kvTable(ctx context.Context, t *testing.T, e *Engine, rows int) *catalog.Relation {
	t.Helper()
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tbl, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii})
	if err != nil {
		t.Fatal(err)
	}
	if rows > 0 {
		writeRange(ctx, t, e, 1, rows)
	}
	return tbl
}

// writeRange writes rows (i, i) for i in [from, to].
func writeRange(ctx context.Context, t *testing.T, e *Engine, from, to int) {
	t.Helper()
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "+ %d %d\n", i, i)
	}
	if err := e.Write(ctx, "t", types.MustParseChunk(kv, b.String())); err != nil {
		t.Fatal(err)
	}
}

func countOf(ctx context.Context, t *testing.T, e *Engine, view string) int64 {
	t.Helper()
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := e.Scan(ctx, view)
	if err != nil || len(rows) != 1 {
		t.Fatalf("scan %s: %v %v", view, rows, err)
	}
	return rows[0][0].(int64)
}

// TestRateLimitZeroHoldsRowsBack: a table whose rate limit is 0 lets no
// new row into the views reading it, yet FLUSH still completes (a paused
// source never holds up a checkpoint); DEFAULT lets the rows through.
// PAUSE / RESUME behave the same way.
func TestRateLimitZeroHoldsRowsBack(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	tbl := kvTable(ctx, t, e, 5)
	b := newBuilder(ctx, e)
	if _, err := e.CreateMaterializedView(ctx, b.view("n", b.simpleAgg(b.scan(tbl), countStar()), []string{"n"})); err != nil {
		t.Fatal(err)
	}
	if got := countOf(ctx, t, e, "n"); got != 5 {
		t.Fatalf("n = %d before the limit, want 5", got)
	}
	zero := int64(0)
	if err := e.SetRateLimit(ctx, "t", &zero); err != nil {
		t.Fatal(err)
	}
	writeRange(ctx, t, e, 6, 8)
	if got := countOf(ctx, t, e, "n"); got != 5 {
		t.Fatalf("n = %d under rate limit 0, want 5 (rows held back)", got)
	}
	if err := e.SetRateLimit(ctx, "t", nil); err != nil {
		t.Fatal(err)
	}
	if got := countOf(ctx, t, e, "n"); got != 8 {
		t.Fatalf("n = %d after DEFAULT, want 8", got)
	}

	if err := e.SetPaused(ctx, "t", true); err != nil {
		t.Fatal(err)
	}
	writeRange(ctx, t, e, 9, 10)
	if got := countOf(ctx, t, e, "n"); got != 8 {
		t.Fatalf("n = %d while paused, want 8", got)
	}
	// A recovery rebuilds the actors; the pause must survive it.
	if err := e.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	writeRange(ctx, t, e, 11, 11)
	if got := countOf(ctx, t, e, "n"); got != 8 {
		t.Fatalf("n = %d while paused after RECOVER, want 8", got)
	}
	if err := e.SetPaused(ctx, "t", false); err != nil {
		t.Fatal(err)
	}
	if got := countOf(ctx, t, e, "n"); got != 11 {
		t.Fatalf("n = %d after RESUME, want 11", got)
	}

	if err := e.SetPaused(ctx, "nope", true); sqlerr.CodeOf(err) != sqlerr.UndefinedTable {
		t.Fatalf("pause of unknown relation: %v, want 42P01", err)
	}
	neg := int64(-1)
	if err := e.SetRateLimit(ctx, "t", &neg); sqlerr.CodeOf(err) != sqlerr.InvalidParameterValue {
		t.Fatalf("negative rate limit: %v, want 22023", err)
	}
}

// TestShowAndCancelJobs: a view created in the background over a big table
// under a small rate limit is listed while it backfills; CANCEL JOBS
// removes it at once with all its state, and the table is unharmed.
func TestShowAndCancelJobs(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	const rows = 12000 // well above the rate limiter's burst (4 chunks)
	tbl := kvTable(ctx, t, e, rows)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	spec := b.view("slow", b.hashAgg(b.scan(tbl), []int{0}, countStar()), []string{"k", "n"})
	spec.Background, spec.Definition = true, "SELECT k, count(*) FROM t GROUP BY k"
	limit := int64(200)
	spec.RateLimit = &limit
	slow, err := e.CreateMaterializedView(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Jobs()) != 1 {
		t.Fatalf("jobs = %+v, want the background view", e.Jobs())
	}
	waitFor(t, "backfill progress", func() bool { j := e.Jobs(); return len(j) == 1 && j[0].Scanned > 0 })
	j := e.Jobs()[0]
	if j.ID != slow.ID || j.Name != "slow" || j.Status != "creating" || j.Definition != spec.Definition {
		t.Fatalf("job = %+v", j)
	}
	if j.Done || j.Scanned >= rows {
		t.Fatalf("job = %+v: the rate limit did not hold the backfill back", j)
	}
	if err := e.CancelJobs(ctx, []uint64{uint64(tbl.ID)}); sqlerr.CodeOf(err) != sqlerr.UndefinedObject {
		t.Fatalf("cancel of a created table: %v, want 42704", err)
	}
	start := time.Now()
	if err := e.CancelJobs(ctx, []uint64{uint64(slow.ID)}); err != nil {
		t.Fatal(err)
	}
	t.Logf("cancel took %v", time.Since(start))
	if len(e.Jobs()) != 0 {
		t.Fatalf("jobs after cancel = %+v", e.Jobs())
	}
	waitFor(t, "cancelled job's state deleted", func() bool {
		for _, id := range append(slow.Job.StateTables, slow.Table.ID) {
			if has, _ := e.Store().HasKeys(id); has {
				return false
			}
		}
		_, still := e.Catalog().ByID(slow.ID)
		return !still
	})
	if err := e.CancelJobs(ctx, []uint64{uint64(slow.ID)}); sqlerr.CodeOf(err) != sqlerr.UndefinedObject {
		t.Fatalf("second cancel: %v, want 42704", err)
	}
	if got, err := e.Scan(ctx, "t"); err != nil || len(got) != rows {
		t.Fatalf("t has %d rows (%v), want %d", len(got), err, rows)
	}
}

// TestBackgroundCreateFinishes: without a limit a background view catches
// up on its own, leaves SHOW JOBS and becomes created.
func TestBackgroundCreateFinishes(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	tbl := kvTable(ctx, t, e, 100)
	b := newBuilder(ctx, e)
	spec := b.view("bg", b.simpleAgg(b.scan(tbl), countStar()), []string{"n"})
	spec.Background = true
	rel, err := e.CreateMaterializedView(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "background view created", func() bool {
		r, ok := e.Catalog().ByID(rel.ID)
		return ok && r.State == catalog.StateCreated && len(e.Jobs()) == 0
	})
	if got := countOf(ctx, t, e, "bg"); got != 100 {
		t.Fatalf("bg = %d, want 100", got)
	}
}

// TestCancelForegroundCreate: CANCEL JOBS from elsewhere ends a CREATE
// that waits for its backfill with 57014, and the view does not come back.
func TestCancelForegroundCreate(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	tbl := kvTable(ctx, t, e, 2000)
	b := newBuilder(ctx, e)
	spec := b.view("fg", b.simpleAgg(b.scan(tbl), countStar()), []string{"n"})
	limit := int64(50)
	spec.RateLimit = &limit
	errc := make(chan error, 1)
	go func() {
		_, err := e.CreateMaterializedView(ctx, spec)
		errc <- err
	}()
	waitFor(t, "the job listed", func() bool { return len(e.Jobs()) == 1 })
	if err := e.CancelJobs(ctx, []uint64{uint64(e.Jobs()[0].ID)}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if sqlerr.CodeOf(err) != sqlerr.QueryCanceled {
			t.Fatalf("create after cancel: %v, want 57014", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CREATE did not return after CANCEL JOBS")
	}
	waitFor(t, "fg gone", func() bool { _, ok := e.Catalog().ByName("fg"); return !ok })
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Catalog().ByName("fg"); ok {
		t.Fatal("fg came back")
	}
}
