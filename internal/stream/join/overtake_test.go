package join

import (
	"context"
	"fmt"
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
	return newOvertakeHarnessCfg(t, store, c, testConfig(), th, left, right)
}

func newOvertakeHarnessCfg(t *testing.T, store *storage.Store, c joinCase, cfg config, th *stream.Throttle, left, right stream.Executor) *harness {
	t.Helper()
	n := c.node()
	pending := PendingTable()
	pending.ID = pendingTableID
	n.HashJoin.PendingTable = &pending
	env := &stream.Env{Store: store, ActorID: testActor, Throttle: th}
	return newHarnessEnv(t, env, c, n, cfg, left, right)
}

// pairs counts the (left id, right id) pairs of inserted output rows.
type pairs map[[2]int64]int

func (p pairs) add(t *testing.T, c *types.Chunk) { p.addCols(t, c, 0, 2) }

// addCols counts the pairs of columns l and r.
func (p pairs) addCols(t *testing.T, c *types.Chunk, l, r int) {
	t.Helper()
	for _, i := range c.VisibleIndices() {
		if c.Op(i) != types.Insert {
			t.Fatalf("unexpected %v", c.Op(i))
		}
		row := c.Row(i)
		p[[2]int64{row[l].(int64), row[r].(int64)}]++
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

// A barrier that overtakes a row of an interval join leaves expiry for a
// later one: expiring the candidates the row has yet to read (here the
// right rows of t = 10, below the left watermark) would pull them from
// under its cursor. The row ends with its four matches, each once.
func TestOvertakenRowKeepsItsCandidatesFromExpiry(t *testing.T) {
	c := expiryCase(false)
	in := c.lt
	cfg := testConfig()
	cfg.chunkSize = 2
	left := stream.NewMockSource(in, streamtest.Script(in,
		"barrier\nbarrier\nwatermark 1 50\n+ 1 100 99\nbarrier\nbarrier", 1, testActor)...)
	right := stream.NewMockSource(in, streamtest.Script(in,
		"barrier\n+ 1 100 1\n+ 1 100 2\n+ 1 100 3\n+ 1 100 4\n+ 1 10 5\n+ 1 10 6\n+ 1 10 7\n+ 1 10 8\nbarrier\nbarrier\nbarrier", 1, testActor)...)
	th := stream.NewThrottle()
	h := newOvertakeHarnessCfg(t, streamtest.OpenStore(t), c, cfg, th, left, right)
	got := pairs{}
	for want := uint64(1); want <= 2; want++ {
		if e, _ := h.untilBarrierPairs(t, got); e != want {
			t.Fatalf("barrier %d, want %d", e, want)
		}
	}
	msg := h.next()
	if msg.Chunk == nil {
		t.Fatalf("want the row's first output chunk, got %v", msg)
	}
	got.addCols(t, msg.Chunk, 2, 5)
	th.SetPaused(true)
	if e, n := h.untilBarrierPairs(t, got); e != 3 || n != 0 {
		t.Fatalf("paused: barrier %d after %d rows, want barrier 3 at once", e, n)
	}
	th.SetPaused(false)
	for msg := h.next(); msg.Barrier == nil; msg = h.next() {
		if msg.Chunk != nil {
			got.addCols(t, msg.Chunk, 2, 5)
		}
	}
	want := pairs{{99, 1}: 1, {99, 2}: 1, {99, 3}: 1, {99, 4}: 1}
	if len(got) != len(want) {
		t.Fatalf("pairs %v, want %v", got, want)
	}
	for p := range want {
		if got[p] != 1 {
			t.Fatalf("pairs %v, want %v", got, want)
		}
	}
}

// A long pause keeps at most maxQueuedRows queued rows in memory; the
// rest are read back from the pending table, in order, also after a
// restart, and every pair comes out once.
func TestPausedJoinSpillsItsQueue(t *testing.T) {
	defer func(n int) { maxQueuedRows = n }(maxQueuedRows)
	maxQueuedRows = 3
	const rows = 50
	store := streamtest.OpenStore(t)
	c := kvCase(plan.InnerJoin)
	seedRight(t, store, c, rows, oneKey)
	th := stream.NewThrottle()
	th.SetPaused(true)
	msgs := []stream.Message{stream.NewBarrier(2)}
	for i := range 10 {
		msgs = append(msgs, stream.TextChunk(c.lt, fmt.Sprintf("+ %d 1\n+ %d 1", 2*i, 2*i+1)))
	}
	msgs = append(msgs, stream.NewBarrier(3), stream.NewBarrier(4))
	left := stream.NewMockSource(c.lt, msgs...)
	right := stream.NewMockSource(c.rt, stream.NewBarrier(2), stream.NewBarrier(3), stream.NewBarrier(4))
	cfg := testConfig()
	cfg.chunkSize = 2 // restored spans of two rows
	h := newOvertakeHarnessCfg(t, store, c, cfg, th, left, right)
	got := pairs{}
	for want := uint64(2); want <= 3; want++ {
		if e, n := h.untilBarrierPairs(t, got); e != want || n != 0 {
			t.Fatalf("paused: barrier %d after %d rows, want %d", e, n, want)
		}
	}
	kept, spilled := 0, 0
	for _, q := range h.exec.ot.queue {
		if q.chunk == nil {
			spilled++
		}
	}
	if spilled < 8 {
		t.Fatalf("%d of %d queued chunks spilled, want all but the first few", spilled, len(h.exec.ot.queue))
	}
	commitEpochs(t, store, 2, 3)
	h.stop()
	h.exec.Release()

	// Restarted, still paused: the queue comes back as spans, the first
	// in memory and the rest spilled; resumed, every pair comes out.
	left = stream.NewMockSource(c.lt, stream.NewBarrier(4), stream.NewBarrier(5))
	right = stream.NewMockSource(c.rt, stream.NewBarrier(4), stream.NewBarrier(5))
	h = newOvertakeHarnessCfg(t, store, c, cfg, th, left, right)
	if e, n := h.untilBarrierPairs(t, got); e != 4 || n != 0 {
		t.Fatalf("restarted paused: barrier %d after %d rows", e, n)
	}
	kept, spilled = 0, 0
	for _, q := range h.exec.ot.queue {
		if q.chunk == nil {
			spilled++
		} else {
			kept += q.rows
		}
	}
	if kept == 0 || kept > maxQueuedRows+1 || spilled == 0 {
		t.Fatalf("restored queue: %d rows in memory, %d chunks spilled", kept, spilled)
	}
	th.SetPaused(false)
	if e, _ := h.untilBarrierPairs(t, got); e != 5 {
		t.Fatalf("resumed: barrier %d", e)
	}
	if len(got) != 20*rows {
		t.Fatalf("%d pairs, want %d", len(got), 20*rows)
	}
	for p, n := range got {
		if n != 1 {
			t.Fatalf("pair %v emitted %d times", p, n)
		}
	}
}
