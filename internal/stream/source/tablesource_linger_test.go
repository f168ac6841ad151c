package source

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
)

// TestTableSourceLingersAfterSmallChunk: after a small chunk, records
// arriving one by one are gathered into the next chunk instead of each
// being sent alone, and a barrier ends the wait at once, its records
// before it. The linger is an hour here: the test would time out if the
// barrier did not end it.
func TestTableSourceLingersAfterSmallChunk(t *testing.T) {
	h, store := lingeringSource(t)

	got := make(chan stream.Message, 1)
	go func() { got <- next(t, h.src) }()
	appendDML(t, store, "+ 2 'b'")
	time.Sleep(30 * time.Millisecond)
	select {
	case m := <-got:
		t.Fatalf("the source sent %v while lingering", m)
	default:
	}
	appendDML(t, store, "+ 3 'c'")
	h.barrier(2)
	expectText(t, <-got, "chunk:\n+ 2 b\n+ 3 c")
	expectText(t, next(t, h.src), "barrier 2")
}

// TestTableSourceLingerEndsWithCancel: a lingering Next returns when its
// context ends.
func TestTableSourceLingerEndsWithCancel(t *testing.T) {
	h, store := lingeringSource(t)
	appendDML(t, store, "+ 2 'b'")
	expectCancelUnblocks(t, context.Background(), h.src, "lingering Next")
}

// lingeringSource returns a source, with an hour's linger, that has just
// emitted a one-row chunk: it lingers from here.
func lingeringSource(t *testing.T) (*srcHarness, *storage.Store) {
	t.Helper()
	store := streamtest.OpenStore(t)
	h := newSrcHarness(t, store, 1024)
	h.src.lingerFor = time.Hour
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	appendDML(t, store, "+ 1 'a'")
	expectText(t, next(t, h.src), "chunk:\n+ 1 a")
	return h, store
}
