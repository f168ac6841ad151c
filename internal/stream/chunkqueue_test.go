package stream

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

func TestChunkQueueIsFIFOAndReleasesSlots(t *testing.T) {
	var q ChunkQueue
	a, b := types.MustParseChunk(ii, "+ 1 2"), types.MustParseChunk(ii, "+ 3 4")
	q.Push(a)
	q.Push(nil) // a builder with nothing to give
	q.Push(b)
	if q.Len() != 2 {
		t.Fatalf("Len = %d, want 2", q.Len())
	}
	backing := q.chunks[:2]
	for _, want := range []*types.Chunk{a, b} {
		if got, ok := q.Pop(); !ok || got != want {
			t.Fatalf("Pop = %v, %v", got, ok)
		}
	}
	if _, ok := q.Pop(); ok {
		t.Fatal("Pop of an empty queue")
	}
	if backing[0] != nil || backing[1] != nil {
		t.Fatal("a popped chunk is still referenced by the queue's array")
	}
}
