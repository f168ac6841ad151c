package join

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// restorePending reads back the work a barrier overtook before the actor
// last stopped, keeping the sequence numbers it was stored under: the
// row in progress becomes the task again, past the candidates it had
// used, and the rest is queued in spans of up to a chunk of sequence
// numbers, in memory for the first maxQueuedRows rows and read back when
// due for the others (overtake_spill.go).
func (j *HashJoin) restorePending(ctx context.Context) error {
	ot := &j.ot
	if ot.table == nil {
		return nil
	}
	it, err := ot.table.Scan(ctx, types.Row{ot.index})
	if err != nil {
		return fmt.Errorf("join: read pending work: %w", err)
	}
	r := restorer{j: j, head: -1}
	err = r.readAll(it)
	it.Close()
	if err != nil {
		return err
	}
	r.flush()
	if r.head < 0 {
		return nil
	}
	ot.head, ot.next = r.head, r.last+1
	if t := r.task; t != nil {
		return j.resumeTask(ctx, t)
	}
	return nil
}

// restorer builds the queue from the pending rows in sequence order.
type restorer struct {
	j          *HashJoin
	head, last int64
	task       *pendingTask
	// cur is the span being built: its side, first sequence number, and
	// rows (nil where a sequence number has no row); kept says its rows
	// are kept in memory.
	cur     *queued
	curRows []types.Row
	curOps  []types.Op
	kept    int
	lastOp  types.Op
}

// pendingTask is a stored row in progress.
type pendingTask struct {
	seq               int64
	side              int
	op                types.Op
	row               types.Row
	consumed, matches int64
}

func (r *restorer) readAll(it rowIterator) error {
	for {
		row, ok, err := it.Next()
		if err != nil {
			return fmt.Errorf("join: read pending work: %w", err)
		}
		if !ok {
			return nil
		}
		if err := r.add(row); err != nil {
			return err
		}
	}
}

func (r *restorer) add(row types.Row) error {
	seq := row[pcSeq].(int64)
	if r.head < 0 {
		r.head = seq
	}
	r.last = seq
	op, data, err := r.j.decodePending(row)
	if err != nil {
		return err
	}
	side := int(row[pcSide].(int64))
	if consumed := row[pcConsumed].(int64); consumed >= 0 {
		r.task = &pendingTask{seq: seq, side: side, op: op, row: data, consumed: consumed, matches: row[pcMatches].(int64)}
		return nil
	}
	// A span ends at a chunk's worth of sequence numbers, but never
	// between the halves of an update.
	if c := r.cur; c == nil || c.side != side || (seq-c.seq >= int64(r.j.chunkSize) && r.lastOp != types.UpdateDelete) {
		r.flush()
		r.cur = &queued{side: side, seq: seq}
	}
	r.lastOp = op
	c := r.cur
	c.n = int(seq-c.seq) + 1
	c.rows++
	if r.kept < maxQueuedRows {
		for len(r.curRows) < c.n-1 {
			r.curRows, r.curOps = append(r.curRows, nil), append(r.curOps, types.Insert)
		}
		r.curRows, r.curOps = append(r.curRows, data), append(r.curOps, op)
	}
	return nil
}

// flush queues the span being built: as a chunk of its rows (invisible
// placeholders where a sequence number has none) while memory allows,
// else spilled.
func (r *restorer) flush() {
	c := r.cur
	if c == nil {
		return
	}
	r.cur = nil
	if len(r.curRows) == c.n {
		c.chunk = spanChunk(r.j.sp.sides[c.side].types, r.curRows, r.curOps)
		r.kept += c.rows
	}
	r.curRows, r.curOps = r.curRows[:0], r.curOps[:0]
	r.j.ot.queue = append(r.j.ot.queue, *c)
}

// spanChunk builds a chunk of rows, nil rows invisible.
func spanChunk(ts []types.Type, rows []types.Row, ops []types.Op) *types.Chunk {
	b := types.NewUnboundedBuilder(ts)
	placeholder := make(types.Row, len(ts))
	var vis types.Bitmap
	for i, row := range rows {
		if row == nil {
			b.Append(types.Insert, placeholder)
			continue
		}
		b.Append(ops[i], row)
		vis.Set(i)
	}
	c := b.Take()
	c.SetVisibility(vis)
	return c
}

// resumeTask makes the stored row in progress the join's task again, past
// the candidates it had used.
func (j *HashJoin) resumeTask(ctx context.Context, p *pendingTask) error {
	t := &j.taskBuf
	*t = rowTask{side: p.side, insert: p.op.IsInsert(), row: p.row, key: t.key, seq: p.seq, count: p.matches}
	t.key, t.keyOK = j.sides[p.side].keyOf(t.key, t.row, j.sp.nullSafe)
	if lim := j.amp.limit(); lim > 0 && t.count > lim {
		t.overLimit = true // the guard heard of it before the restart
	}
	if err := j.sides[1-p.side].openCandidates(ctx, t); err != nil {
		return err
	}
	for t.taken < p.consumed {
		batch, err := t.src.next(int(min(p.consumed-t.taken, int64(j.chunkSize))))
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return fmt.Errorf("join: resumed row has %d candidates, had used %d", t.taken, p.consumed)
		}
		t.taken += int64(len(batch))
	}
	j.task = t
	return nil
}
