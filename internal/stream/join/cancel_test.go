package join

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// seedRight commits n right rows (id i, key keyOf(i)) straight into the
// right state table, as a previous run of the job would have left them.
func seedRight(t testing.TB, store *storage.Store, c joinCase, n int, keyOf func(int) int64) {
	t.Helper()
	env := &stream.Env{Store: store, ActorID: testActor}
	tbl, err := storeOpener(env)(c.node().HashJoin.RightTable)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := tbl.Insert(types.Row{int64(i), keyOf(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(context.Background(), 1, nil); err != nil {
		t.Fatal(err)
	}
}

// One left row matching 200k stored right rows is emitted chunk by chunk,
// and cancelling the context stops the probe at once: the next Next
// returns the context's error within milliseconds and every goroutine the
// join started exits.
func TestCancelDuringAmplification(t *testing.T) {
	const rows = 200_000
	store := streamtest.OpenStore(t)
	c := kvCase(plan.InnerJoin)
	seedRight(t, store, c, rows, oneKey)
	left := stream.NewMockSource(c.lt, stream.NewBarrier(2), stream.TextChunk(c.lt, "+ 1 1"), stream.NewBarrier(3))
	right := stream.NewMockSource(c.rt, stream.NewBarrier(2), stream.NewBarrier(3))
	h := newHarness(t, store, c, testConfig(), left, right)
	if msg := h.next(); msg.Barrier == nil || msg.Barrier.Epoch != 2 {
		t.Fatalf("first message %v", msg)
	}
	for i := range 2 {
		msg := h.next()
		if msg.Chunk == nil || msg.Chunk.Cardinality() != testConfig().chunkSize {
			t.Fatalf("message %d: want a full chunk, got %v", i, msg)
		}
	}
	h.cancel()
	start := time.Now()
	_, err := h.exec.Next(h.ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Fatalf("Next took %v after cancel", d)
	}
	done := make(chan error, 1)
	go func() { done <- h.g.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("the join's goroutines did not exit after cancel")
	}
	// The probe stopped in the middle of the key's rows: its iterator is
	// still open until the owner releases the executor (the store's
	// close, at cleanup, fails on a leaked iterator).
	h.exec.Release()
}

// Without cancellation the same probe emits every match, in full chunks,
// while holding at most one batch of the key's rows in memory.
func TestLargeKeyEmitsAllMatches(t *testing.T) {
	const rows = 20_000
	store := streamtest.OpenStore(t)
	c := kvCase(plan.InnerJoin)
	seedRight(t, store, c, rows, oneKey)
	left := stream.NewMockSource(c.lt, stream.NewBarrier(2), stream.TextChunk(c.lt, "+ 1 1\n- 1 1"),
		stream.NewStopBarrier(3, testActor))
	right := stream.NewMockSource(c.rt, stream.NewBarrier(2), stream.NewStopBarrier(3, testActor))
	h := newHarness(t, store, c, testConfig(), left, right)
	h.next()
	var ins, del, chunks int
	for {
		msg := h.next()
		if msg.Barrier != nil {
			break
		}
		chunks++
		for _, i := range msg.Chunk.VisibleIndices() {
			if msg.Chunk.Op(i) == types.Insert {
				ins++
			} else {
				del++
			}
		}
	}
	if ins != rows || del != rows {
		t.Fatalf("got %d inserts and %d deletes, want %d each", ins, del, rows)
	}
	if want := 2 * rows / testConfig().chunkSize; chunks < want {
		t.Fatalf("%d chunks for %d rows", chunks, 2*rows)
	}
	e, ok := storage.GetBytes(h.exec.sides[1].cache, mustKey(t, h.exec.sides[1], 1))
	if !ok || !e.large || e.rows != nil {
		t.Fatalf("the large key is cached as %+v, want a large marker", e)
	}
}

func mustKey(t testing.TB, s *side, k int64) []byte {
	key, err := s.encodeKey(types.Row{k})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(key)
}

func oneKey(int) int64 { return 1 }
