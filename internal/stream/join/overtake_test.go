package join

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

const pendingTableID = 9

// newOvertakeHarness runs c's join with a pending table and th as its
// actor's throttle.
func newOvertakeHarness(t *testing.T, store *storage.Store, c joinCase, th *stream.Throttle, left, right stream.Executor) *harness {
	t.Helper()
	n := c.node()
	pending := PendingTable()
	pending.ID = pendingTableID
	n.HashJoin.PendingTable = &pending
	env := &stream.Env{Store: store, ActorID: testActor, Throttle: th}
	return newHarnessEnv(t, env, c, n, testConfig(), left, right)
}

// pairs counts the (left id, right id) pairs of inserted output rows.
type pairs map[[2]int64]int

func (p pairs) add(t *testing.T, c *types.Chunk) {
	t.Helper()
	for _, i := range c.VisibleIndices() {
		if c.Op(i) != types.Insert {
			t.Fatalf("unexpected %v", c.Op(i))
		}
		r := c.Row(i)
		p[[2]int64{r[0].(int64), r[2].(int64)}]++
	}
}

// untilBarrierPairs pulls up to the next barrier, adding the output's
// pairs, and returns the barrier's epoch and the rows seen.
func (h *harness) untilBarrierPairs(t *testing.T, p pairs) (uint64, int) {
	t.Helper()
	n := 0
	for {
		msg := h.next()
		if msg.Barrier != nil {
			return msg.Barrier.Epoch, n
		}
		if msg.Chunk != nil {
			n += msg.Chunk.Cardinality()
			p.add(t, msg.Chunk)
		}
	}
}

func commitEpochs(t *testing.T, store *storage.Store, epochs ...uint64) {
	t.Helper()
	for _, e := range epochs {
		if err := store.Commit(context.Background(), e, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// A paused join lets barriers overtake its work: the rest of a row
// matching thousands, and the input queued behind it. The work overtaken
// is in the checkpoint: a join restarted from it, still paused, passes
// barriers without output, and once resumed finishes exactly where the
// first left off — every pair once.
func TestPausedJoinLetsBarriersOvertake(t *testing.T) {
	const rows = 5000
	store := streamtest.OpenStore(t)
	c := kvCase(plan.InnerJoin)
	seedRight(t, store, c, rows, oneKey)
	th := stream.NewThrottle()
	left := stream.NewMockSource(c.lt, stream.NewBarrier(2), stream.TextChunk(c.lt, "+ 1 1\n+ 2 1"),
		stream.TextChunk(c.lt, "+ 3 1"), stream.NewBarrier(3), stream.NewBarrier(4))
	right := stream.NewMockSource(c.rt, stream.NewBarrier(2), stream.NewBarrier(3), stream.NewBarrier(4))
	h := newOvertakeHarness(t, store, c, th, left, right)
	got := pairs{}
	if e, n := h.untilBarrierPairs(t, got); e != 2 || n != 0 {
		t.Fatalf("first epoch: barrier %d after %d rows", e, n)
	}
	for range 2 {
		msg := h.next()
		if msg.Chunk == nil || msg.Chunk.Cardinality() != testConfig().chunkSize {
			t.Fatalf("want a full chunk, got %v", msg)
		}
		got.add(t, msg.Chunk)
	}
	th.SetPaused(true)
	if e, n := h.untilBarrierPairs(t, got); e != 3 || n != 0 {
		t.Fatalf("paused: barrier %d after %d rows, want barrier 3 at once", e, n)
	}
	if e, n := h.untilBarrierPairs(t, got); e != 4 || n != 0 {
		t.Fatalf("paused: barrier %d after %d rows, want barrier 4 at once", e, n)
	}
	commitEpochs(t, store, 2, 3, 4)
	h.stop()
	h.exec.Release()

	// The restart: barriers 5 and 6 pass while paused, then the rest.
	th = stream.NewThrottle()
	th.SetPaused(true)
	left = stream.NewMockSource(c.lt, stream.NewBarrier(5), stream.NewBarrier(6), stream.NewBarrier(7))
	right = stream.NewMockSource(c.rt, stream.NewBarrier(5), stream.NewBarrier(6), stream.NewBarrier(7))
	h = newOvertakeHarness(t, store, c, th, left, right)
	for _, want := range []uint64{5, 6} {
		if e, n := h.untilBarrierPairs(t, got); e != want || n != 0 {
			t.Fatalf("restarted paused: barrier %d after %d rows, want %d", e, n, want)
		}
	}
	th.SetPaused(false)
	if e, _ := h.untilBarrierPairs(t, got); e != 7 {
		t.Fatalf("resumed: barrier %d", e)
	}
	if len(got) != 3*rows {
		t.Fatalf("%d distinct pairs, want %d", len(got), 3*rows)
	}
	for p, n := range got {
		if n != 1 {
			t.Fatalf("pair %v emitted %d times", p, n)
		}
	}
	commitEpochs(t, store, 5, 6, 7)
	if left := pendingRows(t, h); left != 0 {
		t.Fatalf("%d pending rows left after the work was done", left)
	}
}

// A throttled join also lets a barrier pass in the middle of a row, and
// goes on with the row after it.
func TestThrottledJoinLetsBarriersOvertake(t *testing.T) {
	const rows = 20_000
	store := streamtest.OpenStore(t)
	c := kvCase(plan.InnerJoin)
	seedRight(t, store, c, rows, oneKey)
	th := stream.NewThrottle()
	th.SetRateLimit(10)
	left := stream.NewMockSource(c.lt, stream.NewBarrier(2), stream.TextChunk(c.lt, "+ 1 1"),
		stream.NewBarrier(3), stream.NewBarrier(4))
	right := stream.NewMockSource(c.rt, stream.NewBarrier(2), stream.NewBarrier(3), stream.NewBarrier(4))
	h := newOvertakeHarness(t, store, c, th, left, right)
	got := pairs{}
	h.untilBarrierPairs(t, got)
	// The chunk is taken at the throttle's pace (one row: at once), and
	// barrier 3 passes before the row's 20 000 matches are out.
	e, n := h.untilBarrierPairs(t, got)
	if e != 3 || n >= rows {
		t.Fatalf("throttled: barrier %d after %d rows, want barrier 3 before %d", e, n, rows)
	}
	th.SetRateLimit(-1)
	h.untilBarrierPairs(t, got)
	if len(got) != rows {
		t.Fatalf("%d distinct pairs, want %d", len(got), rows)
	}
}

func pendingRows(t *testing.T, h *harness) int {
	t.Helper()
	it, err := h.exec.ot.table.Scan(context.Background(), types.Row{h.exec.ot.index})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for {
		_, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return n
		}
		n++
	}
}
