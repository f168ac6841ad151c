package join

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A paused job keeps receiving its upstream's changes; they wait in the
// join's queue. So that a long pause of a job with a busy upstream cannot
// exhaust memory, queued chunks past the first maxQueuedRows rows, once a
// barrier has stored them in the pending table, are dropped from memory
// and read back from the table when their turn comes.

// maxQueuedRows is the most queued rows a join keeps in memory.
var maxQueuedRows = 1 << 16

// spill drops from memory the stored queued chunks past the first
// maxQueuedRows rows.
func (j *HashJoin) spill() {
	rows := 0
	for k := range j.ot.queue {
		q := &j.ot.queue[k]
		if q.chunk == nil {
			continue
		}
		rows += q.rows
		if rows > maxQueuedRows && q.seq >= 0 {
			q.chunk = nil
		}
	}
}

// loadSpan reads back the n rows stored from seq on, from side, as one
// chunk: a row that was not stored (it was invisible) is an invisible
// placeholder, so row i stays seq+i.
func (j *HashJoin) loadSpan(ctx context.Context, side int, seq int64, n int) (*types.Chunk, error) {
	ts := j.sp.sides[side].types
	b := types.NewUnboundedBuilder(ts)
	placeholder := make(types.Row, len(ts))
	var vis types.Bitmap
	for i := range n {
		pk := j.pendingKey(seq + int64(i))[:2]
		r, ok, err := j.ot.table.Get(ctx, pk)
		if err != nil {
			return nil, fmt.Errorf("join: read back queued input: %w", err)
		}
		if !ok {
			b.Append(types.Insert, placeholder)
			continue
		}
		op, data, err := j.decodePending(r)
		if err != nil {
			return nil, err
		}
		b.Append(op, data)
		vis.Set(i)
	}
	c := b.Take()
	if c == nil {
		return nil, fmt.Errorf("join: queued input of %d rows from %d is empty", n, seq)
	}
	c.SetVisibility(vis)
	return c, nil
}

// decodePending returns a pending row's op and input row.
func (j *HashJoin) decodePending(r types.Row) (types.Op, types.Row, error) {
	side, op := int(r[pcSide].(int64)), types.Op(r[pcOp].(int64))
	data, err := codec.DecodeValue(r[pcRow].([]byte), j.sp.sides[side].types)
	if err != nil {
		return 0, nil, fmt.Errorf("join: pending row %v: %w", r[pcSeq], err)
	}
	return op, data, nil
}
