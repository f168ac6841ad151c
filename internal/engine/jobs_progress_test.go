package engine

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// TestJobProgressPercent: a rate-limited background backfill reports its
// upstream's committed row count as its total and a progress that is
// scanned/total, rises, stays below 100 while it runs and is 100 only once
// it is done.
func TestJobProgressPercent(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	const rows = 12000 // per actor above the limiter's burst of four chunks
	tbl := kvTable(ctx, t, e, rows)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, ok, err := e.Store().RowCount(tbl.Table.ID); err != nil || !ok || n != rows {
		t.Fatalf("row count of t = %d, %v, %v; want %d", n, ok, err, rows)
	}
	b := newBuilder(ctx, e)
	spec := b.view("slow", b.simpleAgg(b.scan(tbl), countStar()), []string{"n"})
	spec.Background = true
	limit := int64(1000)
	spec.RateLimit = &limit
	if _, err := e.CreateMaterializedView(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var seen []float64
	sample := func() (JobInfo, bool) {
		t.Helper()
		jobs := e.Jobs()
		if len(jobs) == 0 {
			return JobInfo{}, false
		}
		j := jobs[0]
		checkProgress(t, j, rows)
		if n := len(seen); n > 0 && j.Progress < seen[n-1] {
			t.Fatalf("progress went back from %.2f to %.2f", seen[n-1], j.Progress)
		}
		seen = append(seen, j.Progress)
		return j, true
	}
	waitFor(t, "backfill under way", func() bool { j, _ := sample(); return j.Scanned > 0 })
	first, _ := sample()
	if first.Done {
		t.Fatalf("job = %+v: the rate limit did not hold the backfill back", first)
	}
	waitFor(t, "progress rises", func() bool { j, _ := sample(); return j.Progress > first.Progress })
	if err := e.SetRateLimit(ctx, "slow", nil); err != nil {
		t.Fatal(err)
	}
	sawDone := false
	waitFor(t, "job created", func() bool {
		j, listed := sample()
		sawDone = sawDone || j.Done
		return !listed
	})
	if got := countOf(ctx, t, e, "slow"); got != rows {
		t.Fatalf("slow = %d, want %d", got, rows)
	}
	t.Logf("progress samples: %d, first under way %.2f%%, last %.2f%% (saw done: %v)",
		len(seen), first.Progress, seen[len(seen)-1], sawDone)
}

// checkProgress checks one SHOW JOBS sample against its definition.
func checkProgress(t *testing.T, j JobInfo, total int64) {
	t.Helper()
	if j.Total != total {
		t.Fatalf("job = %+v: total %d, want %d", j, j.Total, total)
	}
	if j.Progress < 0 || j.Progress > 100 || (!j.Done && j.Progress >= 100) || (j.Done && j.Progress != 100) {
		t.Fatalf("job = %+v: progress out of range", j)
	}
	if want := 100 * float64(j.Scanned) / float64(j.Total); !j.Done && j.Progress != min(want, maxUnfinished) {
		t.Fatalf("job = %+v: progress is not scanned/total (%.2f)", j, want)
	}
}

// TestJobProgressOfSelfJoin: a self-join backfills its table twice, so
// its total is twice the table's rows, and it finishes at 100 %.
func TestJobProgressOfSelfJoin(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	const rows = 400
	tbl := kvTable(ctx, t, e, rows)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	join := b.join(innerJoin, b.scan(tbl), b.scan(tbl), []int{0}, []int{0})
	spec := b.view("pairs", b.simpleAgg(join, countStar()), []string{"n"})
	spec.Background = true
	zero := int64(0)
	spec.RateLimit = &zero
	if _, err := e.CreateMaterializedView(ctx, spec); err != nil {
		t.Fatal(err)
	}
	jobs := e.Jobs()
	if len(jobs) != 1 || jobs[0].Scanned != 0 || jobs[0].Progress != 0 {
		t.Fatalf("jobs = %+v, want the held join at 0 %%", jobs)
	}
	checkProgress(t, jobs[0], 2*rows)
	if err := e.SetRateLimit(ctx, "pairs", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pairs created", func() bool {
		jobs := e.Jobs()
		if len(jobs) == 1 {
			checkProgress(t, jobs[0], 2*rows)
		}
		return len(jobs) == 0
	})
	if got := countOf(ctx, t, e, "pairs"); got != rows {
		t.Fatalf("pairs = %d, want %d", got, rows)
	}
}

// TestRowCountFollowsDeletesAndRestart: the committed row count of a table
// follows inserts, overwrites and deletes, and is the same after a
// restart (it is committed with the rows, not recounted).
func TestRowCountFollowsDeletesAndRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	ii := kvTable(ctx, t, e, 0)
	pkTable(ctx, t, e)
	writeU(ctx, t, e, "+ 1 1\n+ 2 2\n+ 3 3\n+ 1 10\n") // the last overwrites
	writeU(ctx, t, e, "- 2 2\n- 7 7\n")                // 7 was never there
	writeRange(ctx, t, e, 1, 40)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	u, _ := e.Catalog().ByName("u")
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			id   uint32
			want int64
		}{{ii.Table.ID, 40}, {u.Table.ID, 2}} {
			if n, _, err := e.Store().RowCount(c.id); err != nil || n != c.want {
				t.Fatalf("%s: row count of table %d = %d (%v), want %d", when, c.id, n, err, c.want)
			}
		}
	}
	check("before restart")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	check("after restart")
	writeU(ctx, t, e, "- 1 10\n+ 9 9\n+ 8 8\n")
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := e.Store().RowCount(u.Table.ID); n != 3 {
		t.Fatalf("row count of u after more writes = %d, want 3", n)
	}
}

// pkTable creates u (k bigint primary key, v bigint).
func pkTable(ctx context.Context, t *testing.T, e *Engine) {
	t.Helper()
	cols := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	if _, err := e.CreateTable(ctx, TableSpec{Name: "u", Columns: cols, PK: []int{0}}); err != nil {
		t.Fatal(err)
	}
}

// writeU writes a chunk of (k, v) changes into u.
func writeU(ctx context.Context, t *testing.T, e *Engine, rows string) {
	t.Helper()
	if err := e.Write(ctx, "u", types.MustParseChunk(kv, rows)); err != nil {
		t.Fatal(err)
	}
}
