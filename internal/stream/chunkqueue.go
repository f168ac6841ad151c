package stream

import "github.com/sluice-db/sluice/internal/types"

// ChunkQueue holds the output chunks an executor made from one input
// message and has not returned yet (one input row may produce several
// chunks). Pop releases each slot, so a returned chunk is not kept alive
// by the queue's backing array.
type ChunkQueue struct {
	chunks []*types.Chunk
}

// Push queues c; a nil c (a builder with nothing to give) is ignored.
func (q *ChunkQueue) Push(c *types.Chunk) {
	if c != nil {
		q.chunks = append(q.chunks, c)
	}
}

// Pop returns the oldest queued chunk, or false when the queue is empty.
func (q *ChunkQueue) Pop() (*types.Chunk, bool) {
	if len(q.chunks) == 0 {
		return nil, false
	}
	c := q.chunks[0]
	q.chunks[0] = nil
	q.chunks = q.chunks[1:]
	return c, true
}

// Len returns the number of queued chunks.
func (q *ChunkQueue) Len() int { return len(q.chunks) }
