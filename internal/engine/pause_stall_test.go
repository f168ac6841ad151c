//go:build unix

package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// The reference stall, paused instead of dropped (issue 11): PAUSE lets
// the barriers overtake amp's queued work, so the stuck barriers commit
// within the commit bound and later ones keep committing, sibling is
// exact and fresh while amp's freshness shows it behind, a new view can
// be created, and no recovery happens.
func TestPauseRelievesTheStall(t *testing.T) {
	s := newStall(t)
	s.baseline()
	amp := s.amp(true)
	s.insert(1, stallRows)
	s.stuck()
	s.timed("ALTER MATERIALIZED VIEW amp PAUSE", func() error { return s.e.SetPaused(s.ctx, "amp", true) })
	stuckUpTo, start := s.status().Barrier.LastEpoch, time.Now()
	var viewRows int64
	for _, a := range s.e.Node().ActorStats() {
		if a.Job == amp.Job.ID && a.Fragment == amp.Job.MaterializeFragment {
			viewRows += a.Stats.RowsIn.Load()
		}
	}
	t.Logf("amp's materialize had taken %d rows of the stuck epoch when paused", viewRows)
	waitFor(t, "the stuck barriers to commit", func() bool { return s.status().Barrier.Committed >= stuckUpTo })
	logAgainst(t, fmt.Sprintf("epoch %d committed after", stuckUpTo), time.Since(start), issueBounds.commit)
	for _, et := range s.e.RecentEpochs() {
		if et.Committed.After(start) && et.Epoch <= stuckUpTo {
			t.Logf("epoch %d: collected %v after the pause, commit took %v", et.Epoch,
				et.Collected.Sub(start).Round(time.Millisecond), et.Committed.Sub(et.Collected).Round(time.Millisecond))
		}
	}
	later := s.status().Barrier.LastEpoch + 3
	waitFor(t, "later barriers to commit", func() bool { return s.status().Barrier.Committed >= later })

	fresh := s.e.ViewFreshness(time.Now())
	sib, _ := s.e.Catalog().ByName("sibling")
	if f := fresh[sib.ID]; f > 10*stallInterval {
		t.Fatalf("sibling's freshness %v while amp is paused, want at most %v", f, 10*stallInterval)
	}
	if f := fresh[amp.ID]; f < 10*stallInterval {
		t.Fatalf("amp's freshness %v while it holds overtaken work, want it behind", f)
	}
	t.Logf("freshness while amp is paused: sibling %v, amp %v", fresh[sib.ID], fresh[amp.ID])

	start = time.Now()
	b := newBuilder(s.ctx, s.e)
	if _, err := s.e.CreateMaterializedView(s.ctx, b.view("latecomer", b.simpleAgg(b.scan(s.tbl), countStar()), []string{"n"})); err != nil {
		t.Fatal(err)
	}
	t.Logf("CREATE MATERIALIZED VIEW while amp is paused took %v", time.Since(start))
	if err := s.e.Flush(s.ctx); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"sibling": stallRows, "latecomer": stallRows} {
		got, err := s.e.Scan(s.ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0][0] != want {
			t.Fatalf("%s = %v, want count %d", name, got, want)
		}
	}
	if got := s.status().Recoveries; got != s.recoveries {
		t.Fatalf("%d recoveries happened, want none", got-s.recoveries)
	}
	if rel, ok := s.e.Catalog().ByName("amp"); !ok || rel.State != catalog.StateCreated || !rel.Job.Control.Paused {
		t.Fatalf("amp after the pause: %+v", rel)
	}
	s.timed("DROP MATERIALIZED VIEW amp", func() error { return s.e.Drop(s.ctx, "amp", false) })
	s.assertJobGone(amp)
}

// A paused join resumes exactly where it was: a view counting a self-join
// of 3 000 rows of one key, paused in the middle of its 9 000 000 pairs
// for several checkpoints, ends with the exact count once resumed.
func TestPausedJoinResumesExactly(t *testing.T) {
	const n = 3000
	s := newStall(t)
	b := newBuilder(s.ctx, s.e)
	join := b.join(innerJoin, b.scan(s.tbl), b.scan(s.tbl), []int{0}, []int{0})
	spec := b.view("pairs", b.simpleAgg(join, countStar()), []string{"n"})
	if _, err := s.e.CreateMaterializedView(s.ctx, spec); err != nil {
		t.Fatal(err)
	}
	s.insert(1, n)
	waitFor(t, "a barrier held by the join", func() bool { return s.status().Barrier.OldestInFlightAge > 2*stallInterval })
	if err := s.e.SetPaused(s.ctx, "pairs", true); err != nil {
		t.Fatal(err)
	}
	later := s.status().Barrier.LastEpoch + 5
	waitFor(t, "barriers to commit while paused", func() bool { return s.status().Barrier.Committed >= later })
	paused := s.count("pairs")
	if paused >= n*n {
		t.Fatalf("pairs = %d while paused: the join was not held (make it heavier)", paused)
	}
	if err := s.e.SetPaused(s.ctx, "pairs", false); err != nil {
		t.Fatal(err)
	}
	within(t, 3*time.Minute, "the join to finish", func() bool { return s.count("pairs") >= n*n })
	if err := s.e.Flush(s.ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.count("pairs"); got != n*n {
		t.Fatalf("pairs = %d after resume, want %d (paused at %d)", got, n*n, paused)
	}
	t.Logf("paused at %d of %d pairs", paused, n*n)
}

// count reads a one-row count view (0 while it is empty).
func (s *stall) count(view string) int64 { return viewCount(s.t, s.e, view) }

// PAUSE holds a view without a join too: its gates queue the table's
// changes and let barriers pass, so the view stays as it was, behind,
// also across a restart; RESUME brings it to the exact sums.
func TestPauseHoldsAView(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	e, err := Open(ctx, pauseOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	cols := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tbl, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	if _, err := e.CreateMaterializedView(ctx, b.view("sums", b.simpleAgg(b.scan(tbl), countStar()), []string{"n"})); err != nil {
		t.Fatal(err)
	}
	write := func(e *Engine, from, to int) {
		var rows strings.Builder
		for g := from; g <= to; g++ {
			fmt.Fprintf(&rows, "+ %d %d\n", g%7, g)
		}
		if err := e.Write(ctx, "t", types.MustParseChunk([]types.Type{types.TInt64, types.TInt64}, rows.String())); err != nil {
			t.Fatal(err)
		}
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write(e, 1, 100)
	if got := viewCount(t, e, "sums"); got != 100 {
		t.Fatalf("sums = %d, want 100", got)
	}
	if err := e.SetPaused(ctx, "sums", true); err != nil {
		t.Fatal(err)
	}
	write(e, 101, 300)
	time.Sleep(3 * stallInterval)
	sums, _ := e.Catalog().ByName("sums")
	if got, f := viewCount(t, e, "sums"), e.ViewFreshness(time.Now())[sums.ID]; got != 100 || f < 2*stallInterval {
		t.Fatalf("paused: sums = %d (want 100), freshness %v (want it behind)", got, f)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e, err = Open(ctx, pauseOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}()
	write(e, 301, 400)
	if got := viewCount(t, e, "sums"); got != 100 {
		t.Fatalf("paused after a restart: sums = %d, want 100", got)
	}
	if err := e.SetPaused(ctx, "sums", false); err != nil {
		t.Fatal(err)
	}
	within(t, 3*time.Minute, "sums to catch up", func() bool { return viewCount(t, e, "sums") >= 400 })
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := viewCount(t, e, "sums"); got != 400 {
		t.Fatalf("resumed: sums = %d, want 400", got)
	}
}
