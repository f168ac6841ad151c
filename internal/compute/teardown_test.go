package compute

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// promptly bounds how long a teardown may take: actors notice
// cancellation within one chunk, so this is generous even under -race.
const promptly = 2 * time.Second

// stuckAttachment deploys job 1 (actor 100 materializing values into
// table 1000) and prepares, without starting, job 2 attached to it, whose
// Add mutation rides on barrier 1. With channel capacity 1, actor 100
// passes barrier 1 into job 2's channel and then blocks sending its rows
// there: its consumer never reads. The function returns once actor 100 is
// shown stuck (barrier 2 is injected but not collected).
func stuckAttachment(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, Config{ChunkSize: 1, ChannelCapacity: 1})
	h.deploy(t, singletonView(1, kvRows(5), kvTable(1000, 0)))
	adds, err := h.node.Prepare(context.Background(), attachedView(2, 11, 1000, kvTable(2000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if len(adds[100]) != 1 {
		t.Fatalf("adds = %v, want one dispatcher for actor 100", adds)
	}
	b := barrier(1)
	b.Mutation = &stream.AddMutation{JobID: 2, Dispatchers: adds}
	h.inject(t, b, 100)
	h.waitCollected(t, 1, 100)
	h.inject(t, barrier(2), 100)
	time.Sleep(50 * time.Millisecond)
	if got := h.ev.collectedBy(2); len(got) != 0 {
		t.Fatalf("actor 100 collected epoch 2 although its consumer never reads (channel capacity 1): %v", got)
	}
	return h
}

// TestDropReleasesBlockedUpstream is graceful detach: dropping the job a
// producer of another job is blocked on releases the producer at once,
// and the producer carries on without error.
func TestDropReleasesBlockedUpstream(t *testing.T) {
	ctx := context.Background()
	h := stuckAttachment(t)
	dctx, cancel := context.WithTimeout(ctx, promptly)
	defer cancel()
	if err := h.node.DropJobs(dctx, []uint32{2}); err != nil {
		t.Fatalf("DropJobs: %v", err)
	}
	if got := h.node.Jobs(); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("Jobs after drop = %v, want [1]", got)
	}
	h.waitCollected(t, 2, 100)
	h.inject(t, barrier(3), 100)
	h.waitCollected(t, 3, 100)
	for epoch := uint64(1); epoch <= 3; epoch++ {
		if err := h.store.Commit(ctx, epoch, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.scan(t, kvTable(1000, 0)); len(got) != 5 {
		t.Fatalf("surviving job's table holds %d rows, want 5", len(got))
	}
	if f := h.ev.failures(); len(f) != 0 {
		t.Fatalf("detach was reported as a failure: %v", f)
	}
}

// TestDropCancelsBlockedActor drops the blocked producer itself: its send
// is cancelled, DropJobs returns at once, and the cancellation is not a
// failure.
func TestDropCancelsBlockedActor(t *testing.T) {
	h := stuckAttachment(t)
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	start := time.Now()
	if err := h.node.DropJobs(ctx, []uint32{1}); err != nil {
		t.Fatalf("DropJobs of a blocked job: %v", err)
	}
	t.Logf("dropped a blocked job in %v", time.Since(start))
	if err := h.node.Inject(barrier(3), []stream.ActorID{100}); err == nil {
		t.Fatal("a dropped actor accepts barriers")
	}
	if err := h.node.DropJobs(ctx, []uint32{2}); err != nil {
		t.Fatal(err)
	}
	if got := h.node.Jobs(); len(got) != 0 {
		t.Fatalf("Jobs after dropping both = %v", got)
	}
	if f := h.ev.failures(); len(f) != 0 {
		t.Fatalf("deliberate cancellation reported as failure: %v", f)
	}
}

func TestDropJobsIsIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	h := newHarness(t, Config{})
	h.deploy(t, valuesToMaterialize(1, kvRows(10), kvTable(1000, 0)))
	h.deploy(t, valuesToMaterialize(2, kvRows(10), kvTable(2000, 0)))
	h.inject(t, barrier(1), 100, 200)
	h.waitCollected(t, 1, 100, 101, 102, 200, 201, 202)

	if err := h.node.DropJobs(ctx, []uint32{99}); err != nil {
		t.Fatalf("DropJobs of an unknown job: %v", err)
	}
	if err := h.node.DropJobs(ctx, []uint32{1, 99, 1}); err != nil {
		t.Fatalf("DropJobs: %v", err)
	}
	if err := h.node.DropJobs(ctx, []uint32{1}); err != nil {
		t.Fatalf("second DropJobs: %v", err)
	}
	if got := h.node.JobActors(1); got != nil {
		t.Fatalf("dropped job still has actors %v", got)
	}
	if got := h.node.Jobs(); !slices.Equal(got, []uint32{2}) {
		t.Fatalf("Jobs = %v, want [2]", got)
	}
	// The other job is untouched.
	h.inject(t, barrier(2), 200)
	h.waitCollected(t, 2, 200, 201, 202)
	if f := h.ev.failures(); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
}

// TestDropPreparedJob drops a job that was prepared but never started.
func TestDropPreparedJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	h := newHarness(t, Config{})
	if _, err := h.node.Prepare(ctx, valuesToMaterialize(1, kvRows(3), kvTable(1000, 0))); err != nil {
		t.Fatal(err)
	}
	if err := h.node.DropJobs(ctx, []uint32{1}); err != nil {
		t.Fatal(err)
	}
	if err := h.node.Start(ctx, 1); err == nil {
		t.Fatal("Start of a dropped job succeeded")
	}
}

func TestStopAll(t *testing.T) {
	h := newHarness(t, Config{ChunkSize: 1, ChannelCapacity: 1})
	h.deploy(t, valuesToMaterialize(1, kvRows(10), kvTable(1000, 0)))
	h.deploy(t, valuesToMaterialize(2, kvRows(10), kvTable(2000, 0)))
	h.inject(t, barrier(1), 100, 200)
	h.waitCollected(t, 1, 100, 101, 102, 200, 201, 202)
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	if err := h.node.StopAll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.node.Jobs(); len(got) != 0 {
		t.Fatalf("Jobs after StopAll = %v", got)
	}
	for _, id := range []stream.ActorID{100, 200} {
		if err := h.node.Inject(barrier(2), []stream.ActorID{id}); err == nil {
			t.Fatalf("actor %d accepts barriers after StopAll", id)
		}
	}
	if err := h.node.StopAll(ctx); err != nil {
		t.Fatalf("second StopAll: %v", err)
	}
	if f := h.ev.failures(); len(f) != 0 {
		t.Fatalf("StopAll reported failures: %v", f)
	}
	// A stopped job can be deployed again (recovery rebuilds it).
	h.deploy(t, valuesToMaterialize(1, kvRows(10), kvTable(1000, 0)))
	h.inject(t, barrier(2), 100)
	h.waitCollected(t, 2, 100, 101, 102)
}

// TestActorFailureIsReported makes a materialize actor fail on its own:
// rows are hash dispatched by column 0 but the table is distributed by
// column 1, so an actor receives rows whose table vnode it does not own.
// The failure reaches Events.ActorFailed; the producer, now blocked on the
// dead actor's full channel, is torn down without being reported.
func TestActorFailureIsReported(t *testing.T) {
	h := newHarness(t, Config{ChunkSize: 1, ChannelCapacity: 1})
	rows := make([]types.Row, 0, 64)
	for k := int64(1); len(rows) < cap(rows); k++ {
		rows = append(rows, types.Row{k, 1000 + k})
	}
	misrouted := 0
	for _, r := range rows {
		if ownerOf(r[0]) != ownerOf(r[1]) {
			misrouted++
		}
	}
	if misrouted == 0 {
		t.Fatal("no test row is misrouted; the test cannot fail an actor")
	}
	table := kvTable(1000, 1)
	table.PK = []int{0, 1} // a dist key must be part of the pk
	h.deploy(t, valuesToMaterialize(1, rows, table))
	h.inject(t, barrier(1), 100)

	var failed map[stream.ActorID]error
	if !poll(5*time.Second, func() bool { failed = h.ev.failures(); return len(failed) > 0 }) {
		t.Fatal("no actor failure reported")
	}
	for id, err := range failed {
		if id != 101 && id != 102 {
			t.Errorf("actor %d reported failed, want only materialize actors", id)
		}
		if !errors.Is(err, storage.ErrVNodeNotOwned) {
			t.Errorf("actor %d failed with %v, want ErrVNodeNotOwned", id, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	if err := h.node.DropJobs(ctx, []uint32{1}); err != nil {
		t.Fatalf("DropJobs after a failure: %v", err)
	}
	// The other materialize actor may have failed on its own misrouted
	// rows after the poll above saw the first; the drop itself must add
	// no failure (a torn-down actor is not a failed one).
	for id, err := range h.ev.failures() {
		if failed[id] == nil && !((id == 101 || id == 102) && errors.Is(err, storage.ErrVNodeNotOwned)) {
			t.Errorf("actor %d reported failed by the drop: %v", id, err)
		}
	}
}

// TestControlUnknownActorsSkipped: control commands to actors that are
// gone are no-ops, not panics.
func TestControlUnknownActorsSkipped(t *testing.T) {
	h := newHarness(t, Config{})
	h.deploy(t, valuesToMaterialize(1, kvRows(3), kvTable(1000, 0)))
	h.node.Control([]stream.ActorID{7, 100}, stream.ControlPause{Paused: false})
	h.node.Control([]stream.ActorID{7}, stream.ControlStop{})
	h.inject(t, barrier(1), 100)
	h.waitCollected(t, 1, 100, 101, 102)
}

// StopAll starts a new generation, so the coordinator can tell a failure
// reported by a torn-down actor (whose id a recovery reuses) from a new one.
func TestStopAllAdvancesGeneration(t *testing.T) {
	h := newHarness(t, Config{})
	before := h.node.Generation()
	if err := h.node.StopAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := h.node.Generation(); after != before+1 {
		t.Fatalf("generation %d after StopAll, want %d", after, before+1)
	}
}
