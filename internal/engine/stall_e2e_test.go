//go:build unix

package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/meta"
	"github.com/sluice-db/sluice/internal/types"
)

// The reference stall of issue 4, end to end:
//
//	CREATE TABLE t (k int, v int);
//	CREATE MATERIALIZED VIEW sibling AS SELECT count(*) AS n, sum(v) AS s FROM t;
//	CREATE MATERIALIZED VIEW amp AS SELECT ... FROM t a JOIN t b ON a.k = b.k;
//	INSERT INTO t SELECT 1, g FROM generate_series(1, 20000) AS g;
//
// Every row has k = 1, so the join emits 4e8 rows and the barrier behind
// the insert is stuck for minutes. The tests below take control actions
// during that stall and check what the issue promises: the action returns
// at once, the job's goroutines exit, CPU and heap go back to what they
// were, no recovery happens, the next barrier commits promptly and the
// sibling view is exact.

const (
	stallRows     = 20000
	stallInterval = 100 * time.Millisecond
)

// The issue's bounds: a control action returns within 100 ms, the job's
// goroutines are gone and CPU and heap are back within 1 s, the stuck
// barriers commit within two intervals. The test asserts them with a
// margin, because the stalled join saturates both cores of a CI machine
// until the instant it is dropped: the drop then waits for the scheduler
// to run the cancelled actors' exits (measured 5-170 ms on 2 loaded cores,
// once 640 ms while another build shared them). -race instruments every
// memory access and widens the margin again. The measured values are
// logged next to the issue's bounds; sluice-bench drop-under-stall reports
// their distribution. Even widened, every bound is far below the stall
// itself (minutes), so an action that waited for the stuck barrier fails.
type stallBounds struct{ action, exit, commit time.Duration }

var issueBounds = stallBounds{action: 100 * time.Millisecond, exit: time.Second, commit: 2 * stallInterval}

func bounds() stallBounds {
	if raceEnabled {
		return stallBounds{action: 50 * issueBounds.action, exit: 5 * issueBounds.exit, commit: 20 * issueBounds.commit}
	}
	return stallBounds{action: 10 * issueBounds.action, exit: 2 * issueBounds.exit, commit: 3 * issueBounds.commit}
}

// logAgainst logs a measurement next to the issue's bound.
func logAgainst(t *testing.T, what string, took, issue time.Duration) {
	t.Helper()
	verdict := "within"
	if took > issue {
		verdict = "OVER"
	}
	t.Logf("%s: %v (%s the issue's %v)", what, took.Round(10*time.Microsecond), verdict, issue)
}

// stall is an engine with t and sibling, and what it looked like before
// the heavy job.
type stall struct {
	t   *testing.T
	ctx context.Context
	e   *Engine
	tbl *catalog.Relation
	// heap is the live heap before the heavy job existed.
	heap       uint64
	recoveries int
}

func newStall(t *testing.T) *stall {
	ctx := context.Background()
	e, err := Open(ctx, Options{Dir: t.TempDir(), BarrierInterval: stallInterval, Parallelism: 2,
		ChunkSize: 256, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	s := &stall{t: t, ctx: ctx, e: e}
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	if s.tbl, err = e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii}); err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	if _, err := e.CreateMaterializedView(ctx, b.view("sibling", b.simpleAgg(b.scan(s.tbl), countStar(), sumOf(1)), []string{"n", "s"})); err != nil {
		t.Fatal(err)
	}
	return s
}

// baseline records the heap and the recovery count before the heavy job.
func (s *stall) baseline() {
	if err := s.e.Flush(s.ctx); err != nil {
		s.t.Fatal(err)
	}
	s.heap = liveHeap()
	s.recoveries = s.status().Recoveries
}

func (s *stall) status() meta.Status {
	st, err := s.e.Coordinator().Status(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

// insert writes rows (1, g) for g in [from, to].
func (s *stall) insert(from, to int) {
	var rows strings.Builder
	for g := from; g <= to; g++ {
		fmt.Fprintf(&rows, "+ 1 %d\n", g)
	}
	if err := s.e.Write(s.ctx, "t", types.MustParseChunk([]types.Type{types.TInt64, types.TInt64}, rows.String())); err != nil {
		s.t.Fatal(err)
	}
}

// amp creates the self-join; in the background it returns at once and
// backfills.
func (s *stall) amp(background bool) *catalog.Relation {
	b := newBuilder(s.ctx, s.e)
	spec := b.view("amp", b.join(innerJoin, b.scan(s.tbl), b.scan(s.tbl), []int{0}, []int{0}),
		[]string{"k1", "v1", "r1", "k2", "v2", "r2"})
	spec.Background, spec.Definition = background, "SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k"
	rel, err := s.e.CreateMaterializedView(s.ctx, spec)
	if err != nil {
		s.t.Fatal(err)
	}
	return rel
}

// stuck waits until the barrier is stuck and returns the committed epoch it
// is stuck at: the oldest barrier in flight is older than ten intervals,
// and the committed epoch has not moved for three more. (Three intervals
// were too few under the race detector, where the first epochs of a job
// fed by a source crawl through at 700 ms each before the queue fills.)
func (s *stall) stuck() uint64 {
	waitFor(s.t, "a stuck barrier", func() bool { return s.status().Barrier.OldestInFlightAge > 10*stallInterval })
	before := s.status().Barrier
	time.Sleep(3 * stallInterval)
	s.assertStuckAt(before.Committed)
	return before.Committed
}

func (s *stall) assertStuckAt(committed uint64) {
	s.t.Helper()
	st := s.status().Barrier
	if st.Committed != committed || st.InFlight == 0 || st.OldestInFlightAge < 3*stallInterval {
		s.t.Fatalf("barrier not stuck at epoch %d: %s", committed, st)
	}
}

// timed runs a control action and fails if it took longer than the
// issue's bound.
func (s *stall) timed(what string, action func() error) {
	s.t.Helper()
	bound := bounds().action
	start := time.Now()
	if err := action(); err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
	took := time.Since(start)
	logAgainst(s.t, what, took, issueBounds.action)
	if took > bound {
		s.t.Fatalf("%s took %v during the stall, want <= %v", what, took, bound)
	}
}

// assertJobGone checks, within the exit bound, that no goroutine of the
// job is left and its state keys and catalog entry are deleted.
func (s *stall) assertJobGone(rel *catalog.Relation) {
	s.t.Helper()
	start := time.Now()
	within(s.t, bounds().exit, rel.Name+"'s goroutines to exit", func() bool { return jobGoroutines(rel.ID) == 0 })
	logAgainst(s.t, rel.Name+"'s goroutines gone after", time.Since(start), issueBounds.exit)
	waitFor(s.t, rel.Name+"'s state deleted", func() bool {
		for _, id := range append(rel.Job.StateTables, rel.Table.ID) {
			if has, err := s.e.Store().HasKeys(id); err != nil || has {
				return false
			}
		}
		_, still := s.e.Catalog().ByID(rel.ID)
		return !still
	})
}

// assertReleased checks what must hold once the heavy job is gone: the
// barriers that were stuck commit within two intervals, CPU and heap fall
// back, no recovery happened, and sibling holds exactly rows 1..stallRows.
// rowsSinceBaseline is how many rows were written after the baseline.
func (s *stall) assertReleased(rowsSinceBaseline int) {
	s.t.Helper()
	b := bounds()
	stuckUpTo, start := s.status().Barrier.LastEpoch, time.Now()
	within(s.t, b.commit, "the stuck barriers to commit", func() bool { return s.status().Barrier.Committed >= stuckUpTo })
	logAgainst(s.t, fmt.Sprintf("epoch %d committed after", stuckUpTo), time.Since(start), issueBounds.commit)

	var share float64
	within(s.t, b.exit, "CPU to fall back to idle", func() bool {
		share = cpuShare(200 * time.Millisecond)
		return share < 0.2
	})
	logAgainst(s.t, fmt.Sprintf("CPU at %.0f%% of a core after", 100*share), time.Since(start), issueBounds.exit)

	// Rows written after the baseline stay, in t's DML log and sibling's
	// state: they are not the job's memory. They cost about 300 bytes of
	// Go heap each here; the allowance is 512. The stalled join holds tens
	// of MiB, so a job that kept its memory still fails.
	limit := s.heap + s.heap/10 + uint64(rowsSinceBaseline)*512
	var heap uint64
	within(s.t, b.exit, "heap to fall back", func() bool { heap = liveHeap(); return heap <= limit })
	s.t.Logf("live heap: %d KiB before the job, %d KiB after (limit %d KiB)", s.heap>>10, heap>>10, limit>>10)

	if got := s.status().Recoveries; got != s.recoveries {
		s.t.Fatalf("%d recoveries happened, want none", got-s.recoveries)
	}
	if err := s.e.Flush(s.ctx); err != nil {
		s.t.Fatal(err)
	}
	got, err := s.e.Scan(s.ctx, "sibling")
	if err != nil {
		s.t.Fatal(err)
	}
	if len(got) != 1 || got[0][0] != int64(stallRows) || types.Compare(got[0][1], numeric(stallRows*(stallRows+1)/2)) != 0 {
		s.t.Fatalf("sibling = %v, want n=%d s=%d", got, stallRows, stallRows*(stallRows+1)/2)
	}
}

// logStallHeap logs the live heap during the stall, to show that the heap
// check has something to catch.
func (s *stall) logStallHeap() {
	s.t.Logf("live heap during the stall: %d KiB", liveHeap()>>10)
}

// within polls cond until it holds, failing the test after bound.
func within(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s took longer than %v", what, bound)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestReferenceStallDrop: DROP of the stuck job, and before it CANCEL of
// a job created during the stall, which is still waiting for its first
// barrier.
func TestReferenceStallDrop(t *testing.T) {
	s := newStall(t)
	s.baseline()
	amp := s.amp(false)
	s.insert(1, stallRows)
	at := s.stuck()
	if jobGoroutines(amp.ID) == 0 {
		t.Fatal("no goroutine carries amp's label: the goroutine check below would prove nothing")
	}

	// A light view created now cannot get its first barrier through: the
	// epochs before it wait for amp.
	b := newBuilder(s.ctx, s.e)
	spec := b.view("late", b.simpleAgg(b.scan(s.tbl), countStar()), []string{"n"})
	spec.Background = true
	late, err := s.e.CreateMaterializedView(s.ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if jobs := s.e.Jobs(); len(jobs) != 1 || jobs[0].ID != late.ID {
		t.Fatalf("jobs = %+v, want late", jobs)
	}
	s.assertStuckAt(at) // so late's first barrier (after epoch at) has not committed
	s.timed("CANCEL JOBS late", func() error { return s.e.CancelJobs(s.ctx, []uint64{uint64(late.ID)}) })
	s.assertJobGone(late)
	// The CREATE's background goroutine is not one of the job's, but the
	// cancel ends its wait too, even inside a FLUSH behind amp's barrier.
	within(t, bounds().exit, "the background CREATE's goroutine to end", func() bool { return goroutinesIn("finishInBackground") == 0 })
	// Cancelling did not need the barrier: amp still holds it.
	s.assertStuckAt(at)

	// Throttle, pause and resume the stuck job: control messages, not
	// barriers, so each returns at once and the barrier stays stuck.
	limit := int64(10)
	s.timed("ALTER amp SET RATE_LIMIT = 10", func() error { return s.e.SetRateLimit(s.ctx, "amp", &limit) })
	s.timed("ALTER amp PAUSE", func() error { return s.e.SetPaused(s.ctx, "amp", true) })
	s.timed("ALTER amp RESUME", func() error { return s.e.SetPaused(s.ctx, "amp", false) })
	s.timed("ALTER amp SET RATE_LIMIT = DEFAULT", func() error { return s.e.SetRateLimit(s.ctx, "amp", nil) })
	s.assertStuckAt(at)

	s.logStallHeap()
	s.assertStuckAt(at)
	s.timed("DROP MATERIALIZED VIEW amp", func() error { return s.e.Drop(s.ctx, "amp", false) })
	s.assertJobGone(amp)
	s.assertReleased(stallRows)
}

// TestReferenceStallCancelBackfill: CANCEL JOBS of the heavy join created
// in the background over the existing rows, deep in its backfill, while
// the last rows of the insert wait behind the stuck barrier.
func TestReferenceStallCancelBackfill(t *testing.T) {
	s := newStall(t)
	const late = 10
	s.insert(1, stallRows-late)
	s.baseline()
	amp := s.amp(true)
	waitFor(t, "amp's backfill under way", func() bool {
		jobs := s.e.Jobs()
		return len(jobs) == 1 && jobs[0].Scanned > 0
	})
	s.insert(stallRows-late+1, stallRows)
	at := s.stuck()
	if jobs := s.e.Jobs(); len(jobs) != 1 || jobs[0].Done {
		t.Fatalf("jobs = %+v, want amp still backfilling", jobs)
	}
	if jobGoroutines(amp.ID) == 0 {
		t.Fatal("no goroutine carries amp's label: the goroutine check below would prove nothing")
	}
	s.logStallHeap()
	s.assertStuckAt(at)
	s.timed("CANCEL JOBS amp", func() error { return s.e.CancelJobs(s.ctx, []uint64{uint64(amp.ID)}) })
	s.assertJobGone(amp)
	s.assertReleased(late)
	within(t, bounds().exit, "the background create to end", func() bool { return goroutinesIn("finishInBackground") == 0 })
}
