package join

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Overtaking. A join whose job the user paused or throttled has said it
// may fall behind; it must not hold the barriers every other job waits
// for. So while its throttle is slowed (stream.Throttle.Slowed) the join
// takes input without waiting behind its own work: a barrier passes at
// once, between two output chunks even in the middle of a row that
// matches millions, and the work it overtook (the rest of that row, the
// rest of its input chunk and the input taken since) goes into the
// checkpoint as state, in the pending table. Unaligned checkpoints do
// this in Flink with the records in channels; here it is done inside the
// executor, at output-chunk granularity.
//
// The pending work is, in the order it will be done: the row in progress
// (its task, with how many candidates it has used), the rest of the input
// chunk in progress, and the chunks queued since. At each barrier every
// part not yet stored is written with the next sequence numbers, the row
// in progress is written again with its cursor, and the rows done since
// the last barrier are deleted; the writes commit with the epoch, so a
// restart resumes exactly where the barrier left the work. A row's
// candidates are read in primary-key order, from the cache or the store
// alike, and the other side's rows cannot change while the row is in
// progress, so skipping the candidates used resumes the row exactly.
//
// Watermarks that arrive behind queued work are held (the latest per side
// and column) and applied once the work is done: a later watermark is
// always safe, and one lost in a restart only delays cleaning until the
// next.

// Pending table columns.
const (
	pcIndex    = iota // the actor's index in its fragment
	pcSeq             // the row's place in the pending work
	pcSide            // the input it came from
	pcOp              // its types.Op
	pcConsumed        // candidates used (the row in progress), or -1
	pcMatches         // its matches so far (the row in progress)
	pcRow             // the row, value-encoded
)

// PendingTable returns the shape of a join's pending table; the planner
// gives it an id.
func PendingTable() plan.Table {
	return plan.Table{
		Types:   []types.Type{types.TInt32, types.TInt64, types.TInt16, types.TInt16, types.TInt64, types.TInt64, types.TBytea},
		PK:      []int{pcIndex, pcSeq},
		DistKey: []int{pcIndex},
	}
}

// queued is an input chunk taken while overtaking, not yet started. seq is
// its row 0's sequence number, or -1 while it is not stored; once stored,
// row i is seq+i, n is its rows visible or not, and chunk may be dropped
// from memory (nil, spilled: overtake_spill.go). rows are its visible
// rows.
type queued struct {
	side  int
	chunk *types.Chunk
	seq   int64
	n     int
	rows  int
	since types.DTimestamptz // the last barrier before it came (0: unknown)
}

// heldMark is a watermark held behind queued work.
type heldMark struct {
	side int
	wm   *stream.Watermark
}

// overtake is the join's overtaking state.
type overtake struct {
	table    stateTable // nil: the join never overtakes (an older plan)
	index    int64      // the actor's index (every integer datum is an int64)
	throttle *stream.Throttle
	queue    []queued
	held     []heldMark
	// head is the lowest sequence number that may still be stored; next
	// is the next one to give.
	head, next int64
	// restored: the pending work of the last run has been read back.
	restored bool
	// lastBarrier is the time of the last barrier passed: work arriving
	// now is input of the epoch it began.
	lastBarrier types.DTimestamptz
	// owe: the last read took a barrier, so a piece of work goes next (a
	// stream of barriers never starves the work).
	owe bool
	// behind is the join's own ActorStats.NewBehind (nil in tests).
	behind *stream.Behind
}

// overtaking reports whether barriers may overtake the join's work now.
func (j *HashJoin) overtaking() bool { return j.ot.table != nil && j.ot.throttle.Slowed() }

// hasWork reports whether the join has work that a barrier would wait for.
func (j *HashJoin) hasWork() bool { return j.task != nil || j.in != nil || len(j.ot.queue) > 0 }

// overtakeStep is step for a slowed job: it reads input first, without
// waiting, so that a barrier behind the join's work passes now, then does
// one piece of work unless the job is paused; with no work to do, or
// paused, it waits for input or a change of the throttle. One message per
// piece of work: an input always ready never starves the work.
//
// The join charges no rows to the throttle: a rate limit is enforced
// where rows enter the job (sources, backfill), and a chunk reaching a
// join may be the output of an amplifying executor before it.
func (j *HashJoin) overtakeStep(ctx context.Context) error {
	th := j.ot.throttle
	if j.hasWork() {
		if !j.ot.owe {
			if _, err := j.takeInput(ctx, stream.Wait{Poll: true}); err != nil || j.barrier != nil {
				j.ot.owe = j.barrier != nil
				return err
			}
		}
		if !th.Paused() {
			j.ot.owe = false
			return j.step(ctx)
		}
	} else if j.releaseHeld() {
		return nil
	}
	wake := th.Changed() // before the checks: a change after them wakes the wait
	if !th.Slowed() || (j.hasWork() && !th.Paused()) {
		return nil
	}
	_, err := j.takeInput(ctx, stream.Wait{Wake: wake, Paused: th.Paused()})
	return err
}

// takeInput reads one input message as w allows and queues it behind the
// join's work; a barrier is set to pass. got is false if none came.
func (j *HashJoin) takeInput(ctx context.Context, w stream.Wait) (bool, error) {
	i, msg, got, err := j.aligned.NextOr(ctx, w)
	if err != nil || !got {
		return false, err
	}
	switch {
	case msg.Chunk != nil:
		j.ot.queue = append(j.ot.queue, queued{side: i, chunk: msg.Chunk, seq: -1, rows: msg.Chunk.Cardinality(),
			since: j.ot.lastBarrier})
	case msg.Barrier != nil:
		j.flush()
		j.barrier = msg.Barrier
	case msg.Watermark != nil:
		if j.hasWork() {
			j.hold(i, msg.Watermark)
		} else {
			j.onWatermark(i, msg.Watermark)
		}
	}
	return true, nil
}

// hold keeps w until the queued work is done, replacing a lower one of
// the same side and column.
func (j *HashJoin) hold(side int, w *stream.Watermark) {
	for k, h := range j.ot.held {
		if h.side == side && h.wm.Col == w.Col {
			if types.Compare(w.Value, h.wm.Value) > 0 {
				j.ot.held[k].wm = w
			}
			return
		}
	}
	j.ot.held = append(j.ot.held, heldMark{side: side, wm: w})
}

// releaseHeld applies the held watermarks, reporting whether there were
// any.
func (j *HashJoin) releaseHeld() bool {
	if len(j.ot.held) == 0 {
		return false
	}
	for _, h := range j.ot.held {
		j.onWatermark(h.side, h.wm)
	}
	clear(j.ot.held)
	j.ot.held = j.ot.held[:0]
	return true
}

// popQueued starts the oldest queued chunk, read back if it was spilled.
func (j *HashJoin) popQueued(ctx context.Context) error {
	q := j.ot.queue[0]
	if q.chunk == nil {
		c, err := j.loadSpan(ctx, q.side, q.seq, q.n)
		if err != nil {
			return err
		}
		q.chunk = c
	}
	j.ot.queue[0] = queued{}
	j.ot.queue = j.ot.queue[1:]
	j.in = &inputChunk{side: q.side, chunk: q.chunk, seq: q.seq, stored: q.seq >= 0, since: q.since}
	return nil
}

// notePending, at a barrier, brings the pending table in line with the
// work pending and tells the actor's stats how far behind it is.
func (j *HashJoin) notePending(b *stream.Barrier) error {
	ot := &j.ot
	if ot.table == nil {
		return nil
	}
	j.ot.lastBarrier = b.Time
	if !j.hasWork() && ot.head == ot.next {
		// Nothing pending and nothing stored (every barrier of a running
		// join): no write, so no seal either.
		j.ot.behind.AtBarrier(b, false, 0)
		return nil
	}
	if err := j.storePending(); err != nil {
		return err
	}
	live := ot.next
	switch {
	case j.task != nil:
		live = j.task.seq
	case j.in != nil:
		live = j.in.seq + int64(j.in.next)
	case len(ot.queue) > 0:
		live = ot.queue[0].seq
	}
	for ; ot.head < live; ot.head++ {
		if err := ot.table.Delete(j.pendingKey(ot.head)); err != nil {
			return err
		}
	}
	j.ot.behind.AtBarrier(b, j.hasWork(), j.oldestSince())
	return ot.table.Seal(b.Epoch)
}

// oldestSince is when the oldest pending work arrived: the time of the
// last barrier before it (0: unknown, restored after a restart).
func (j *HashJoin) oldestSince() types.DTimestamptz {
	switch {
	case j.task != nil:
		return j.task.since
	case j.in != nil:
		return j.in.since
	case len(j.ot.queue) > 0:
		return j.ot.queue[0].since
	}
	return 0
}

// storePending writes the pending work not yet stored, in order, and the
// cursor of the row in progress. Stored parts always come before the
// others: a row is started from a stored chunk or an unstored one, and
// chunks are queued at the end.
func (j *HashJoin) storePending() error {
	if t := j.task; t != nil {
		if t.seq < 0 {
			t.seq = j.ot.next
			j.ot.next++
		}
		if err := j.writePending(t.seq, t.side, opOf(t.insert), t.row, t.consumed(), t.count); err != nil {
			return err
		}
	}
	if in := j.in; in != nil && !in.stored {
		in.seq, in.stored = j.ot.next-int64(in.next), true
		if err := j.writeChunk(in.side, in.chunk, in.next, in.seq); err != nil {
			return err
		}
	}
	for k := range j.ot.queue {
		q := &j.ot.queue[k]
		if q.seq >= 0 {
			continue
		}
		q.seq, q.n = j.ot.next, q.chunk.Capacity()
		if err := j.writeChunk(q.side, q.chunk, 0, q.seq); err != nil {
			return err
		}
	}
	j.spill()
	return nil
}

// writeChunk stores c's visible rows from row from on, row i as seq+i,
// and moves next past them.
func (j *HashJoin) writeChunk(side int, c *types.Chunk, from int, seq int64) error {
	n := c.Capacity()
	for i := from; i < n; i++ {
		if !c.Visible(i) {
			continue
		}
		if err := j.writePending(seq+int64(i), side, c.Op(i), c.Row(i), -1, 0); err != nil {
			return err
		}
	}
	j.ot.next = seq + int64(n)
	return nil
}

func (j *HashJoin) writePending(seq int64, side int, op types.Op, row types.Row, consumed, matches int64) error {
	enc, err := codec.EncodeValue(nil, row, j.sp.sides[side].types)
	if err != nil {
		return fmt.Errorf("join: pending row: %w", err)
	}
	return j.ot.table.Insert(types.Row{j.ot.index, seq, int64(side), int64(op), consumed, matches, enc})
}

// pendingKey is a pending row with only its key set, for a delete (its
// first two columns are the primary key, for a Get).
func (j *HashJoin) pendingKey(seq int64) types.Row {
	return types.Row{j.ot.index, seq, nil, nil, nil, nil, nil}
}

// consumed is how many of the other side's candidates the row has used.
func (t *rowTask) consumed() int64 { return t.taken - int64(len(t.batch)-t.pos) }
