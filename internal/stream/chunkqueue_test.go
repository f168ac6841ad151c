package stream

import (
	"fmt"
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

// TestChangeChunkerKeepsPairsWhole: an update pair that would straddle
// two chunks starts the next one; a chunk of one row cannot hold a pair,
// so the halves become a delete and an insert.
func TestChangeChunkerKeepsPairsWhole(t *testing.T) {
	schema := []types.Type{types.TInt64}
	ops := []types.Op{types.Insert, types.Insert, types.UpdateDelete, types.UpdateInsert, types.Delete}
	for _, tc := range []struct {
		size int
		want [][]types.Op
	}{
		{3, [][]types.Op{{types.Insert, types.Insert}, {types.UpdateDelete, types.UpdateInsert, types.Delete}}},
		{4, [][]types.Op{{types.Insert, types.Insert, types.UpdateDelete, types.UpdateInsert}, {types.Delete}}},
		{1, [][]types.Op{{types.Insert}, {types.Insert}, {types.Delete}, {types.Insert}, {types.Delete}}},
	} {
		var q ChunkQueue
		c := NewChangeChunker(schema, tc.size)
		for i, op := range ops {
			c.Add(&q, op, types.Row{int64(i)})
		}
		c.Flush(&q)
		var got [][]types.Op
		for ch, ok := q.Pop(); ok; ch, ok = q.Pop() {
			var o []types.Op
			for i := range ch.Cardinality() {
				o = append(o, ch.Op(i))
			}
			got = append(got, o)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("size %d: %v, want %v", tc.size, got, tc.want)
		}
	}
}
