//go:build unix

package engine

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/catalog"
)

// TestCrashMidCancelFinishesOnRecovery is TestCrashMidDropFinishesOnRecovery
// for a job still being created: CANCEL JOBS marked it dropping (its first
// durable step) and the process died before the teardown. The next start
// must finish the cancel, not the create: the job is not resumed in the
// background, not listed by SHOW JOBS, and its state is deleted.
func TestCrashMidCancelFinishesOnRecovery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, BarrierInterval: 20e6, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	tbl := kvTable(ctx, t, e, 3000)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	spec := b.view("slow", b.hashAgg(b.scan(tbl), []int{0}, countStar()), []string{"k", "n"})
	spec.Background = true
	zero := int64(0) // paused: it stays creating
	spec.RateLimit = &zero
	slow, err := e.CreateMaterializedView(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if jobs := e.Jobs(); len(jobs) != 1 || jobs[0].ID != slow.ID {
		t.Fatalf("jobs = %+v, want slow", jobs)
	}
	// The crash: slow is marked dropping (durably), nothing else happened.
	cur, _ := e.Catalog().ByID(slow.ID)
	cur.State = catalog.StateDropping
	if err := e.Catalog().Put(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openTest(t, dir)
	if jobs := e.Jobs(); len(jobs) != 0 {
		t.Fatalf("jobs after restart = %+v, want none", jobs)
	}
	if _, ok := e.Catalog().ByID(slow.ID); ok {
		t.Fatal("the cancelled view came back after recovery")
	}
	for _, id := range append(slow.Job.StateTables, slow.Table.ID) {
		if has, err := e.Store().HasKeys(id); err != nil || has {
			t.Fatalf("state table %d still has keys (%v)", id, err)
		}
	}
	if n := goroutinesIn("finishInBackground"); n != 0 {
		t.Fatalf("%d background creates running after restart, want none", n)
	}
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if rows, err := e.Scan(ctx, "t"); err != nil || len(rows) != 3000 {
		t.Fatalf("t has %d rows (%v), want 3000", len(rows), err)
	}
}
