package overtake

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var ts = []types.Type{types.TInt64}

// runGate runs a gate over a scripted input on store.
type runGate struct {
	t      *testing.T
	ctx    context.Context
	cancel context.CancelFunc
	g      *task.Group
	gate   *Gate
}

func newRunGate(t *testing.T, store *storage.Store, th *stream.Throttle, msgs ...stream.Message) *runGate {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := task.NewGroup(ctx)
	env := &stream.Env{Store: store, ActorID: 3, Throttle: th, ChunkSize: 4}
	tbl := Table()
	tbl.ID = 50
	st, err := env.OpenTableAllVNodes(tbl)
	if err != nil {
		t.Fatal(err)
	}
	r := &runGate{t: t, ctx: gctx, cancel: cancel, g: g, gate: NewGate(env, g, st, 0, stream.NewMockSource(ts, msgs...))}
	t.Cleanup(func() { cancel(); _ = g.Wait() })
	return r
}

// untilEpoch returns the rows passed on up to the barrier of epoch:
// resumed, a gate passes barriers ahead of its queued chunks as they come,
// so where each barrier falls depends on the input's timing.
func (r *runGate) untilEpoch(epoch uint64) string {
	r.t.Helper()
	var out string
	for {
		rows, e := r.untilBarrier()
		out += rows
		if e >= epoch {
			return out
		}
	}
}

// untilBarrier returns the rows passed on before the next barrier, and
// its epoch.
func (r *runGate) untilBarrier() (string, uint64) {
	r.t.Helper()
	var sb strings.Builder
	for {
		msg, err := r.gate.Next(r.ctx)
		if err != nil {
			r.t.Fatal(err)
		}
		if msg.Barrier != nil {
			return sb.String(), msg.Barrier.Epoch
		}
		if msg.Chunk != nil {
			sb.WriteString(msg.Chunk.String())
		}
	}
}

func chunk(rows string) stream.Message { return stream.TextChunk(ts, rows) }

// A paused gate queues its input and lets barriers pass; the queue is
// stored at the barrier, survives a restart, and is passed on in order
// once resumed, before the input that came after it.
func TestGateQueuesWhilePaused(t *testing.T) {
	defer func(n int) { MaxMemoryRows = n }(MaxMemoryRows)
	MaxMemoryRows = 2 // the second chunk is read back from the table
	store := streamtest.OpenStore(t)
	th := stream.NewThrottle()
	r := newRunGate(t, store, th, stream.NewBarrier(1), chunk("+ 1\n+ 2"), stream.NewBarrier(2),
		chunk("+ 3\n- 1"), chunk("+ 4"), stream.NewBarrier(3), stream.NewBarrier(4))
	if out, e := r.untilBarrier(); out != "" || e != 1 {
		t.Fatalf("first: %q, barrier %d", out, e)
	}
	if out, e := r.untilBarrier(); e != 2 || out != "+ 1\n+ 2\n" {
		t.Fatalf("running: %q, barrier %d", out, e)
	}
	th.SetPaused(true)
	if out, e := r.untilBarrier(); out != "" || e != 3 {
		t.Fatalf("paused: %q, barrier %d, want the barrier at once", out, e)
	}
	if r.gate.q.Len() != 2 {
		t.Fatalf("%d chunks queued, want 2", r.gate.q.Len())
	}
	for _, e := range []uint64{2, 3} {
		if err := store.Commit(context.Background(), e, nil); err != nil {
			t.Fatal(err)
		}
	}
	r.cancel()
	_ = r.g.Wait()

	th = stream.NewThrottle()
	th.SetPaused(true)
	r = newRunGate(t, store, th, stream.NewBarrier(4), chunk("+ 5"), stream.NewBarrier(5), stream.NewBarrier(6),
		stream.NewBarrier(7), stream.NewBarrier(8), stream.NewBarrier(9))
	if out, e := r.untilBarrier(); out != "" || e != 4 {
		t.Fatalf("restarted: %q, barrier %d", out, e)
	}
	if out, e := r.untilBarrier(); out != "" || e != 5 {
		t.Fatalf("restarted paused: %q, barrier %d", out, e)
	}
	th.SetPaused(false)
	if out := r.untilEpoch(8); out != "+ 3\n- 1\n+ 4\n+ 5\n" {
		t.Fatalf("resumed: %q", out)
	}
}

// A long pause keeps only MaxMemoryRows queued rows in memory; the rest
// are read back from the table in turn, their invisible rows skipped.
func TestGateReadsBackSpilledChunks(t *testing.T) {
	defer func(n int) { MaxMemoryRows = n }(MaxMemoryRows)
	MaxMemoryRows = 1
	store := streamtest.OpenStore(t)
	th := stream.NewThrottle()
	th.SetPaused(true)
	hidden := types.MustParseChunk(ts, "+ 7\n+ 8\n+ 9")
	var vis types.Bitmap
	vis.Set(0)
	vis.Set(2)
	hidden.SetVisibility(vis)
	r := newRunGate(t, store, th, stream.NewBarrier(1), chunk("+ 1"), stream.ChunkMsg(hidden), chunk("+ 2"),
		stream.NewBarrier(2), stream.NewBarrier(3), stream.NewBarrier(4), stream.NewBarrier(5), stream.NewBarrier(6), stream.NewBarrier(7))
	r.untilBarrier()
	if out, e := r.untilBarrier(); out != "" || e != 2 {
		t.Fatalf("paused: %q, barrier %d", out, e)
	}
	spilled := 0
	for _, e := range r.gate.q.entries {
		if e.chunk == nil {
			spilled++
		}
	}
	if spilled != 2 {
		t.Fatalf("%d chunks spilled, want 2", spilled)
	}
	th.SetPaused(false)
	if out := r.untilEpoch(6); out != "+ 1\n+ 7\n+ 9\n+ 2\n" { // a chunk per barrier at least
		t.Fatalf("resumed: %q", out)
	}
}

// A rate limit alone does not queue: it is enforced where rows enter the
// job, and the gate passes its input on in order.
func TestGatePassesWhileRateLimited(t *testing.T) {
	th := stream.NewThrottle()
	th.SetRateLimit(10)
	r := newRunGate(t, streamtest.OpenStore(t), th, stream.NewBarrier(1), chunk("+ 1"), stream.NewBarrier(2),
		chunk("+ 2"), stream.NewBarrier(3))
	for _, w := range []struct {
		epoch uint64
		rows  string
	}{{1, ""}, {2, "+ 1\n"}, {3, "+ 2\n"}} {
		if out, e := r.untilBarrier(); e != w.epoch || out != w.rows {
			t.Fatalf("rate limited: %q before barrier %d, want %q before %d", out, e, w.rows, w.epoch)
		}
	}
	if r.gate.q.Stored() {
		t.Fatal("a rate limit alone stored queued input")
	}
}

// A paused gate's wait for input is not counted as the actor waiting for
// input: the pause is the user's, not a slow upstream.
func TestPausedWaitIsNotInputWait(t *testing.T) {
	stats := &stream.ActorStats{}
	out, in := stream.NewChannel(1, 3, 8)
	stream.CountFor(out, in, nil, stats)
	merge := stream.NewMerge(ts, []*stream.Input{in})
	th := stream.NewThrottle()
	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := task.NewGroup(ctx)
	t.Cleanup(func() { cancel(); _ = g.Wait() })
	env := &stream.Env{Store: streamtest.OpenStore(t), ActorID: 3, Throttle: th, ChunkSize: 4, Stats: stats}
	tbl := Table()
	tbl.ID = 50
	st, err := env.OpenTableAllVNodes(tbl)
	if err != nil {
		t.Fatal(err)
	}
	gate := NewGate(env, g, st, 0, merge)
	send := func(m stream.Message) {
		if err := out.Send(gctx, m); err != nil {
			t.Fatal(err)
		}
	}
	send(stream.NewBarrier(1))
	if msg, err := gate.Next(gctx); err != nil || msg.Barrier == nil {
		t.Fatalf("first: %v %v", msg, err)
	}
	th.SetPaused(true)
	send(chunk("+ 1"))
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = out.Send(gctx, stream.NewBarrier(2))
	}()
	before := stats.InputBlocked.Total()
	if msg, err := gate.Next(gctx); err != nil || msg.Barrier == nil || msg.Barrier.Epoch != 2 {
		t.Fatalf("paused: %v %v, want barrier 2", msg, err)
	}
	if waited := stats.InputBlocked.Total() - before; waited > 150*time.Millisecond {
		t.Fatalf("a 300 ms paused wait counted %v as input wait", waited)
	}
}
