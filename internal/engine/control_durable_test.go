package engine

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/catalog"
)

// TestPauseSurvivesRestart: ALTER … PAUSE is recorded in the catalog, so a
// table paused before a restart is still paused after it: rows written
// after the restart stay out of the views until RESUME, which lets them
// all through. A rate limit on a view survives the same way.
func TestPauseSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	tbl := kvTable(ctx, t, e, 5)
	b := newBuilder(ctx, e)
	if _, err := e.CreateMaterializedView(ctx, b.view("n", b.simpleAgg(b.scan(tbl), countStar()), []string{"n"})); err != nil {
		t.Fatal(err)
	}
	if got := countOf(ctx, t, e, "n"); got != 5 {
		t.Fatalf("n = %d, want 5", got)
	}
	if err := e.SetPaused(ctx, "t", true); err != nil {
		t.Fatal(err)
	}
	limit := int64(7)
	if err := e.SetRateLimit(ctx, "n", &limit); err != nil {
		t.Fatal(err)
	}
	writeRange(ctx, t, e, 6, 8)
	if got := countOf(ctx, t, e, "n"); got != 5 {
		t.Fatalf("n = %d while paused, want 5", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openTest(t, dir)
	rel, _ := e.Catalog().ByName("t")
	if !rel.Job.Control.Paused {
		t.Fatalf("t's control after restart = %+v, want paused", rel.Job.Control)
	}
	if v, _ := e.Catalog().ByName("n"); v.Job.Control.RateLimit == nil || *v.Job.Control.RateLimit != limit {
		t.Fatalf("n's control after restart = %+v, want rate limit %d", v.Job.Control, limit)
	}
	writeRange(ctx, t, e, 9, 10)
	if got := countOf(ctx, t, e, "n"); got != 5 {
		t.Fatalf("n = %d after restart, want 5: the pause was lost", got)
	}
	// RECOVER rebuilds the actors from the catalog too.
	if err := e.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if got := countOf(ctx, t, e, "n"); got != 5 {
		t.Fatalf("n = %d after RECOVER, want 5: the pause was lost", got)
	}
	if err := e.SetPaused(ctx, "t", false); err != nil {
		t.Fatal(err)
	}
	if err := e.SetRateLimit(ctx, "n", nil); err != nil {
		t.Fatal(err)
	}
	if got := countOf(ctx, t, e, "n"); got != 10 {
		t.Fatalf("n = %d after RESUME, want 10", got)
	}
	if rel, _ := e.Catalog().ByName("t"); rel.Job.Control != (catalog.JobControl{}) {
		t.Fatalf("t's control after RESUME and DEFAULT = %+v, want none", rel.Job.Control)
	}
}

// TestCreateRateLimitSurvivesRestart: the rate limit a CREATE was given
// (SET backfill_rate_limit) is part of the job's first catalog record: a
// background view created at limit 0 has scanned nothing after a restart,
// and lifting the limit lets it finish.
func TestCreateRateLimitSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	tbl := kvTable(ctx, t, e, 300)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	spec := b.view("held", b.simpleAgg(b.scan(tbl), countStar()), []string{"n"})
	spec.Background = true
	zero := int64(0)
	spec.RateLimit = &zero
	if _, err := e.CreateMaterializedView(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openTest(t, dir)
	for range 3 {
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	jobs := e.Jobs()
	if len(jobs) != 1 || jobs[0].Scanned != 0 || jobs[0].Done || jobs[0].Total != 300 {
		t.Fatalf("jobs after restart = %+v, want held at 0 of 300 rows", jobs)
	}
	if err := e.SetRateLimit(ctx, "held", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "held created", func() bool { return len(e.Jobs()) == 0 })
	if got := countOf(ctx, t, e, "held"); got != 300 {
		t.Fatalf("held = %d, want 300", got)
	}
}

// TestAlterDuringBackgroundCreateIsKept: marking a background view created
// writes the current catalog record, so a PAUSE given while it backfilled
// is not overwritten by the record the CREATE started with.
func TestAlterDuringBackgroundCreateIsKept(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	tbl := kvTable(ctx, t, e, 50)
	b := newBuilder(ctx, e)
	spec := b.view("bg", b.simpleAgg(b.scan(tbl), countStar()), []string{"n"})
	spec.Background = true
	zero := int64(0)
	spec.RateLimit = &zero
	if _, err := e.CreateMaterializedView(ctx, spec); err != nil {
		t.Fatal(err)
	}
	// Held back by the limit, then by the pause, the job cannot finish
	// before the last ALTER; the resume lets it be marked created.
	if err := e.SetPaused(ctx, "bg", true); err != nil {
		t.Fatal(err)
	}
	one := int64(1000)
	if err := e.SetRateLimit(ctx, "bg", &one); err != nil {
		t.Fatal(err)
	}
	if len(e.Jobs()) != 1 {
		t.Fatal("bg finished while paused")
	}
	if err := e.SetPaused(ctx, "bg", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bg created", func() bool { return len(e.Jobs()) == 0 })
	rel, _ := e.Catalog().ByName("bg")
	if rel.Job.Control.RateLimit == nil || *rel.Job.Control.RateLimit != one || rel.Job.Control.Paused {
		t.Fatalf("bg's control after it was created = %+v, want rate limit %d", rel.Job.Control, one)
	}
}
