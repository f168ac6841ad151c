package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine/refeval"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// TestRecoverJobUnderStall: RECOVER MATERIALIZED VIEW of the stalled join
// rebuilds it and the view built on it from t and returns once they caught
// up; both then equal recomputation, the sibling's actors were never
// restarted, and no recovery happened.
func TestRecoverJobUnderStall(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	s := newStallRig(ctx, t, e)
	b := newBuilder(ctx, e)
	onAmpPlan := func(b *builder) *plan.Node { return b.hashAgg(b.scan(s.amp), []int{1}, countStar()) }
	onAmp, err := e.CreateMaterializedView(ctx, b.view("on_amp", onAmpPlan(b), []string{"v", "n"}))
	if err != nil {
		t.Fatal(err)
	}
	// 4e4 join rows (3600 under the race detector) hold the barrier for a while on a test machine, and
	// the rebuild computes them again (its backfill joins all of t), so
	// more would only make the test slow. The write's epoch is in flight
	// when RECOVER starts; how far it got does not matter for the result.
	n := 200
	if raceEnabled {
		n = 60
	}
	s.write(ctx, t, 1, 1, n)
	t.Logf("at RECOVER: oldest epoch in flight for %v", maybeStalled(ctx, e, 150*time.Millisecond))

	siblingActors := e.Node().JobActors(s.sibling.ID)
	gen := e.Node().Generation()
	before := recoveries(t, e)
	oldAmpActors := e.Node().JobActors(s.amp.ID)

	// More rows arrive while the job is torn down and rebuilt: the
	// backfill must pick them up too.
	s.write(ctx, t, 2, 1, 5)
	start := time.Now()
	if err := e.RecoverJob(ctx, "amp"); err != nil {
		t.Fatal(err)
	}
	t.Logf("RECOVER MATERIALIZED VIEW took %v", time.Since(start))
	s.write(ctx, t, 1, n+1, n+3)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	if got := e.Node().JobActors(s.sibling.ID); !slices.Equal(sortedActors(got), sortedActors(siblingActors)) {
		t.Fatalf("sibling actors changed: %v -> %v", siblingActors, got)
	}
	if e.Node().Generation() != gen {
		t.Fatal("the compute node stopped every actor (a full recovery)")
	}
	if got := recoveries(t, e); got != before {
		t.Fatalf("RECOVER MATERIALIZED VIEW cost %d recoveries", got-before)
	}
	for _, a := range e.Node().JobActors(s.amp.ID) {
		if slices.Contains(oldAmpActors, a) {
			t.Fatalf("amp still runs old actor %d", a)
		}
	}
	s.checkSibling(ctx, t, int64(n+8), int64((n+3)*(n+4)/2+15))

	t.Logf("checks at %v", time.Since(start))
	// The oracle: t from the engine's snapshot, views recomputed.
	oracle := newBuilder(ctx, e)
	ampPlan := s.ampPlan(oracle)
	plans := map[uint32]*plan.Node{s.amp.Table.ID: ampPlan}
	plans[onAmp.Table.ID] = oracle.hashAgg(oracle.scan(s.amp), []int{1}, countStar())
	var tables refeval.Tables
	tables = func(id uint32) ([]types.Row, error) {
		if id == s.t.Table.ID {
			return e.Scan(ctx, "t")
		}
		return refeval.Eval(plans[id], tables)
	}
	for _, v := range []*catalog.Relation{s.amp, onAmp} {
		got, err := e.Scan(ctx, v.Name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := refeval.Eval(plans[v.Table.ID], tables)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%s: empty recomputation", v.Name)
		}
		if g, w := rowSet(got, v.Table.Types), rowSet(want, v.Table.Types); !slices.Equal(g, w) {
			t.Fatalf("%s differs from recomputation: %d rows, want %d", v.Name, len(g), len(w))
		}
	}
}

// maybeStalled waits, for a few seconds at most, until a barrier has been
// in flight for at least age, and returns the age it saw. A fast machine
// may get through the join first; the test's assertions hold either way.
func maybeStalled(ctx context.Context, e *Engine, age time.Duration) time.Duration {
	var seen time.Duration
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		st, err := e.Coordinator().Status(ctx)
		if err != nil {
			return seen
		}
		seen = max(seen, st.Barrier.OldestInFlightAge)
		if st.Barrier.OldestInFlightAge >= age {
			return st.Barrier.OldestInFlightAge
		}
	}
	return seen
}

func sortedActors(ids []stream.ActorID) []stream.ActorID {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func TestRecoverJobRefuses(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	newStallRig(ctx, t, e)
	if err := e.RecoverJob(ctx, "nope"); sqlerr.CodeOf(err) != sqlerr.UndefinedTable {
		t.Fatalf("unknown view: %v, want 42P01", err)
	}
	if err := e.RecoverJob(ctx, "t"); sqlerr.CodeOf(err) != sqlerr.WrongObjectType {
		t.Fatalf("a table: %v, want 42809", err)
	}
}

// TestRecoverJobCrashMidReset: a crash after RECOVER MATERIALIZED VIEW
// began clearing a view's state leaves its marker; the recovery at the
// next start clears the view again and it backfills from scratch, so it
// is complete, not half-cleared.
func TestRecoverJobCrashMidReset(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, BarrierInterval: 20e6, Parallelism: 2, ChunkSize: 64, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s := newStallRig(ctx, t, e)
	s.write(ctx, t, 1, 1, 10)
	s.write(ctx, t, 2, 1, 10)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The crash, made on the stopped store: the marker is written and
	// amp's rows are gone, its join state and backfill progress are not.
	st, err := storage.Open(ctx, storage.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutMeta(ctx, resetMarker(s.amp.ID), []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := st.DropTableState(ctx, s.amp.Table.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	if _, found, _ := e.Store().Meta(resetMarker(s.amp.ID)); found {
		t.Fatal("marker left after recovery")
	}
	waitFor(t, "amp rebuilt", func() bool {
		rows, err := e.Scan(ctx, "amp")
		return err == nil && len(rows) == 200
	})
}
