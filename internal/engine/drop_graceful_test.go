package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// stallRig is the reference stall in small: table t, a sibling
// aggregate over it, and amp, a self-join of t on k; writing n rows with
// the same k makes amp's barrier hold for n*n join rows.
type stallRig struct {
	e        *Engine
	t        *catalog.Relation
	sibling  *catalog.Relation
	amp      *catalog.Relation
	ampCols  []string
	ampTypes []types.Type
}

func newStallRig(ctx context.Context, t *testing.T, e *Engine) *stallRig {
	t.Helper()
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tbl, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii})
	if err != nil {
		t.Fatal(err)
	}
	s := &stallRig{e: e, t: tbl, ampCols: []string{"k1", "v1", "r1", "k2", "v2", "r2"}}
	b := newBuilder(ctx, e)
	s.sibling, err = e.CreateMaterializedView(ctx, b.view("sibling", b.simpleAgg(b.scan(tbl), countStar(), sumOf(1)), []string{"n", "s"}))
	if err != nil {
		t.Fatal(err)
	}
	b = newBuilder(ctx, e)
	s.amp, err = e.CreateMaterializedView(ctx, b.view("amp", s.ampPlan(b), s.ampCols))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *stallRig) ampPlan(b *builder) *plan.Node {
	return b.join(innerJoin, b.scan(s.t), b.scan(s.t), []int{0}, []int{0})
}

// write inserts rows (k, v) for v in [from, to].
func (s *stallRig) write(ctx context.Context, t *testing.T, k, from, to int) {
	t.Helper()
	var rows strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&rows, "+ %d %d\n", k, i)
	}
	if err := s.e.Write(ctx, "t", types.MustParseChunk([]types.Type{types.TInt64, types.TInt64}, rows.String())); err != nil {
		t.Fatal(err)
	}
}

// checkSibling asserts sibling counts n rows of t summing to sum.
func (s *stallRig) checkSibling(ctx context.Context, t *testing.T, n, sum int64) {
	t.Helper()
	got, err := s.e.Scan(ctx, "sibling")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0][0] != n || types.Compare(got[0][1], numeric(sum)) != 0 {
		t.Fatalf("sibling = %v, want n=%d sum=%d", got, n, sum)
	}
}

func waitStateGone(t *testing.T, e *Engine, rels ...*catalog.Relation) {
	t.Helper()
	waitFor(t, "dropped jobs' state deleted", func() bool {
		for _, r := range rels {
			for _, id := range append(r.Job.StateTables, r.Table.ID) {
				if has, _ := e.Store().HasKeys(id); has {
					return false
				}
			}
			if _, still := e.Catalog().ByID(r.ID); still {
				return false
			}
		}
		return true
	})
}

func recoveries(t *testing.T, e *Engine) int {
	t.Helper()
	st, err := e.Coordinator().Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Recoveries
}

// TestDropGracefulIdle: on an idle graph the Stop barrier passes at once;
// the call returns with the views and their state gone, CASCADE included,
// without a recovery, and the sibling keeps counting.
func TestDropGracefulIdle(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	s := newStallRig(ctx, t, e)
	b := newBuilder(ctx, e)
	onAmp, err := e.CreateMaterializedView(ctx, b.view("on_amp", b.simpleAgg(b.scan(s.amp), countStar()), []string{"n"}))
	if err != nil {
		t.Fatal(err)
	}
	s.write(ctx, t, 1, 1, 20)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before := recoveries(t, e)
	if err := e.DropGraceful(ctx, "amp", false); sqlerr.CodeOf(err) != sqlerr.DependentObjectsStillExist {
		t.Fatalf("graceful drop without cascade: %v, want 2BP01", err)
	}
	if err := e.DropGraceful(ctx, "amp", true); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"amp", "on_amp"} {
		if _, ok := e.Catalog().ByName(name); ok {
			t.Fatalf("%s still in the catalog", name)
		}
	}
	waitStateGone(t, e, s.amp, onAmp)
	for _, id := range []uint32{s.amp.ID, onAmp.ID} {
		if actors := e.Node().JobActors(id); len(actors) != 0 {
			t.Fatalf("job %d still has actors %v", id, actors)
		}
	}
	s.write(ctx, t, 2, 21, 30)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s.checkSibling(ctx, t, 30, 30*31/2)
	if got := recoveries(t, e); got != before {
		t.Fatalf("graceful drop cost %d recoveries", got-before)
	}
	if err := e.DropGraceful(ctx, "amp", false); sqlerr.CodeOf(err) != sqlerr.UndefinedTable {
		t.Fatalf("second drop: %v, want 42P01", err)
	}
}

// TestDropGracefulUnderStall: the Stop barrier queues behind the stalled
// join, so the graceful drop waits; cancelling it returns 57014 and the
// immediate path finishes the drop, leaving the sibling exact.
func TestDropGracefulUnderStall(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	s := newStallRig(ctx, t, e)
	const n = 3000 // 9e6 join rows: the barrier after this write is stuck for a long time
	committed := e.Store().CommittedEpoch()
	s.write(ctx, t, 1, 1, n)
	waitStalled(t, e)
	before := recoveries(t, e)

	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.DropGraceful(dctx, "amp", false) }()
	// While the stalled epoch has not committed, the Stop barrier behind
	// it cannot have either: the drop must still be waiting.
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		if e.Store().CommittedEpoch() <= committed+1 {
			t.Fatalf("graceful drop returned (%v) while the stalled epoch was still in flight", err)
		}
		t.Skipf("the stall ended within 300ms on this machine; nothing to cancel")
	default:
	}
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("cancelled graceful drop did not return")
	}
	if sqlerr.CodeOf(err) != sqlerr.QueryCanceled {
		t.Fatalf("cancelled graceful drop: %v, want 57014", err)
	}
	if _, ok := e.Catalog().ByName("amp"); ok {
		t.Fatal("amp is still visible after the cancelled graceful drop")
	}
	flushCtx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	defer fcancel()
	if err := e.Flush(flushCtx); err != nil {
		t.Fatalf("flush after drop: %v", err)
	}
	s.checkSibling(ctx, t, n, n*(n+1)/2)
	waitStateGone(t, e, s.amp)
	if got := recoveries(t, e); got != before {
		t.Fatalf("the drop cost %d recoveries", got-before)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal("a bare context error reached the caller instead of 57014")
	}
}
