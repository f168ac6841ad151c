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

// ChangeChunker cuts a run of row changes into output chunks of at most
// size rows, queued in order. An update pair never straddles two chunks
// (a consumer applies the pair at once); with size < 2 there is no room
// for a pair, so its halves become a plain delete and insert.
type ChangeChunker struct {
	b    *types.Builder
	size int
}

// NewChangeChunker returns a chunker of rows of schema.
func NewChangeChunker(schema []types.Type, size int) *ChangeChunker {
	return &ChangeChunker{b: types.NewBuilder(schema, size), size: size}
}

// Add appends one change, queueing a chunk into q when one fills.
func (c *ChangeChunker) Add(q *ChunkQueue, op types.Op, row types.Row) {
	switch {
	case c.size < 2:
		op = op.Normalize()
	case op == types.UpdateDelete && c.b.Len()+2 > c.size && c.b.Len() > 0:
		q.Push(c.b.Take())
	}
	q.Push(c.b.Append(op, row))
}

// Flush queues the rows added since the last chunk.
func (c *ChangeChunker) Flush(q *ChunkQueue) { q.Push(c.b.Take()) }
