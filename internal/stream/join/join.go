package join

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// HashJoin is the streaming hash join executor. See doc.go for its flow.
type HashJoin struct {
	sp      *spec
	sides   [2]*side
	exprCtx *expr.Context
	g       *task.Group
	inputs  []stream.Executor
	// aligned is started on the first Next, because its pumps need a ctx.
	aligned   *stream.Aligned
	chunkSize int

	out   *types.Builder
	ready []*types.Chunk // full output chunks waiting to be returned
	in    *inputChunk    // input chunk being processed
	task  *rowTask       // row being processed
	// taskBuf is the rowTask every input row reuses (one row is processed
	// at a time), and outRow the scratch row emit fills: the builder copies
	// its datums, so neither needs allocating per row.
	taskBuf rowTask
	outRow  types.Row
	// resCols are the residual's input columns, refilled per batch.
	resCols []types.Column
	// barrier is an aligned barrier to pass on once ready is drained.
	barrier *stream.Barrier
	wm      watermarks
	amp     ampCounter
	stats   *stream.ActorStats // the actor's, for its input waits (nil in tests)
	ot      overtake
	// started: the first barrier has passed; no work is done before it.
	started bool
}

// inputChunk is the input chunk in progress; when stored, row i is in
// the pending table as seq+i (overtake.go; seq may be negative: rows
// before next were done before it was stored).
type inputChunk struct {
	side   int
	chunk  *types.Chunk
	next   int
	seq    int64
	stored bool
	since  types.DTimestamptz // the last barrier before it came
}

var _ stream.Executor = (*HashJoin)(nil)

// Schema returns the output column types.
func (j *HashJoin) Schema() []types.Type { return j.sp.outTypes }

// ReadOnly tells the join that the executors above read only the output
// columns marked in read (nil: all): the others go out as NULLs, without
// copying a value per row. In Nexmark q4 the filter and projection above
// the join keep 8 of its 19 columns, and appending every column of every
// output row was a tenth of the CPU.
func (j *HashJoin) ReadOnly(read []bool) error {
	if read == nil {
		return j.out.Unread(nil)
	}
	if len(read) != len(j.sp.outTypes) {
		return fmt.Errorf("join: read mask of %d for %d output columns", len(read), len(j.sp.outTypes))
	}
	unread := make([]bool, len(read))
	for i, r := range read {
		unread[i] = !r
	}
	return j.out.Unread(unread)
}

// Next returns the next output message. Every pass through its loop checks
// ctx, and a pass does a bounded amount of work (start one input row, or
// one batch of probe candidates, or apply candidates until one output
// chunk fills), so a cancelled probe stops within one batch.
func (j *HashJoin) Next(ctx context.Context) (stream.Message, error) {
	if j.aligned == nil {
		for _, s := range j.sides {
			if err := s.start(ctx); err != nil {
				return stream.Message{}, err
			}
		}
		if err := j.restorePending(ctx); err != nil {
			return stream.Message{}, err
		}
		j.aligned = stream.NewAligned(ctx, j.g, j.inputs, j.stats)
	}
	for {
		if len(j.ready) > 0 {
			c := j.ready[0]
			j.ready[0] = nil
			j.ready = j.ready[1:]
			return stream.ChunkMsg(c), nil
		}
		if err := ctx.Err(); err != nil {
			return stream.Message{}, err
		}
		if q := j.wm.queue; len(q) > 0 {
			j.wm.queue = q[1:]
			return stream.Message{Watermark: q[0]}, nil
		}
		if j.barrier != nil {
			return j.passBarrier(ctx)
		}
		step := j.step
		if j.started && j.overtaking() {
			step = j.overtakeStep
		}
		if err := step(ctx); err != nil {
			return stream.Message{}, err
		}
	}
}

// step does the next piece of work, oldest first: the row in progress,
// the input chunk in progress, chunks a barrier overtook, watermarks held
// behind them; then it reads input.
func (j *HashJoin) step(ctx context.Context) error {
	switch {
	case !j.started:
		return j.pull(ctx)
	case j.task != nil:
		return j.advance(ctx, j.task)
	case j.in != nil:
		return j.startNextRow(ctx)
	case len(j.ot.queue) > 0:
		return j.popQueued(ctx)
	case j.releaseHeld():
		return nil
	default:
		return j.pull(ctx)
	}
}

func (j *HashJoin) pull(ctx context.Context) error {
	i, msg, err := j.aligned.Next(ctx)
	if err != nil {
		return err
	}
	switch {
	case msg.Chunk != nil:
		j.in = &inputChunk{side: i, chunk: msg.Chunk, since: j.ot.lastBarrier}
	case msg.Barrier != nil:
		j.flush()
		j.barrier = msg.Barrier
	case msg.Watermark != nil:
		j.onWatermark(i, msg.Watermark)
	}
	return nil
}

// passBarrier seals every state table for the barrier's epoch (all output
// of the epoch has been returned by now) and passes the barrier on.
func (j *HashJoin) passBarrier(ctx context.Context) (stream.Message, error) {
	b := j.barrier
	j.barrier = nil
	j.started = true
	j.amp.barrier()
	if err := j.tidyState(ctx); err != nil {
		return stream.Message{}, err
	}
	for _, s := range j.sides {
		if err := s.seal(b.Epoch); err != nil {
			return stream.Message{}, err
		}
		s.endEpochCache()
	}
	if err := j.notePending(b); err != nil {
		return stream.Message{}, err
	}
	return stream.BarrierMsg(b), nil
}

// tidyState expires and cleans the sides' rows that can no longer match.
// Expiry goes first: it drops the rows it expires from a side's deferred
// list (deferred.go), and cleaning's scan writes the rest out. A barrier
// that overtook a row in progress (overtake.go) leaves both for a later
// one: they would remove candidates the row has yet to use, or has used,
// from under its cursor. Both only free space, so they may wait.
func (j *HashJoin) tidyState(ctx context.Context) error {
	if j.task != nil {
		return nil
	}
	for _, s := range j.sides {
		if err := s.expire(j.exprCtx); err != nil {
			return err
		}
	}
	return j.cleanState(ctx)
}

// flush moves a partly filled output chunk to ready. It is called at the
// end of each input chunk and before a barrier, so output is not held back.
func (j *HashJoin) flush() {
	if c := j.out.Take(); c != nil {
		j.ready = append(j.ready, c)
	}
}

func (j *HashJoin) startNextRow(ctx context.Context) error {
	in := j.in
	n := in.chunk.Capacity()
	for in.next < n && !in.chunk.Visible(in.next) {
		in.next++
	}
	if in.next == n {
		j.in = nil
		j.flush()
		return nil
	}
	i := in.next
	in.next++
	// An update pair is handled as a delete then an insert: each half may
	// have a different key, and so different matches.
	t := &j.taskBuf
	*t = rowTask{side: in.side, insert: in.chunk.Op(i).IsInsert(), row: in.chunk.Row(i), key: t.key, seq: -1}
	if in.stored {
		t.seq = in.seq + int64(i)
	}
	t.since = in.since
	t.key, t.keyOK = j.sides[in.side].keyOf(t.key, t.row, j.sp.nullSafe)
	if err := j.sides[1-in.side].openCandidates(ctx, t); err != nil {
		return err
	}
	j.task = t
	return nil
}

// advance makes progress on t: it applies fetched candidates until an
// output chunk is full, fetches the next batch, or finishes the row.
func (j *HashJoin) advance(ctx context.Context, t *rowTask) error {
	for t.pos < len(t.batch) {
		c := t.batch[t.pos]
		ok := t.pass == nil || t.pass[t.pos]
		t.pos++
		if ok {
			if err := j.onMatch(ctx, t, c); err != nil {
				return err
			}
		}
		if len(j.ready) > 0 {
			j.amp.running(t)
			return nil
		}
	}
	if !t.srcEnded {
		return j.fetch(t)
	}
	return j.finish(t)
}

// fetch reads the next batch of candidates and evaluates the residual
// condition over the whole batch at once.
func (j *HashJoin) fetch(t *rowTask) error {
	batch, err := t.src.next(j.chunkSize)
	if err != nil {
		return err
	}
	t.batch, t.pos, t.pass = batch, 0, nil
	t.taken += int64(len(batch))
	if len(batch) == 0 {
		t.srcEnded = true
		t.src.close()
		return nil
	}
	if j.sp.residual != nil {
		t.pass, err = j.evalResidual(t, batch)
	}
	return err
}

// evalResidual evaluates the residual over the batch's pairs at once, in
// a chunk of the columns it reads, reused from batch to batch.
func (j *HashJoin) evalResidual(t *rowTask, batch []*storedRow) ([]bool, error) {
	if j.resCols == nil {
		j.resCols = make([]types.Column, len(j.sp.resTypes))
		for k, ty := range j.sp.resTypes {
			j.resCols[k] = types.MustColumn(ty, len(batch))
		}
	}
	for _, c := range j.resCols {
		c.Reset()
	}
	for _, c := range batch {
		l, r := orient(t.side, t.row, c.row)
		for k, ci := range j.sp.resCols {
			if ci < len(l) {
				j.resCols[k].Append(l[ci])
			} else {
				j.resCols[k].Append(r[ci-len(l)])
			}
		}
	}
	col, err := j.sp.residual.Eval(j.exprCtx, types.NewChunk(j.resCols, nil))
	if err != nil {
		return nil, fmt.Errorf("join: residual condition: %w", err)
	}
	pass := make([]bool, len(batch))
	for i := range pass {
		v := col.Get(i)
		pass[i] = v != nil && v.(bool)
	}
	return pass, nil
}

// onMatch applies one matching pair. When the other side is outer, its
// row's degree moves: a first match replaces the row's NULL-padded output,
// and losing its last match brings the padded output back.
func (j *HashJoin) onMatch(ctx context.Context, t *rowTask, c *storedRow) error {
	t.count++
	other := j.sides[1-t.side]
	l, r := orient(t.side, t.row, c.row)
	if !other.outer {
		j.emit(opOf(t.insert), l, r)
		return nil
	}
	d, err := other.degreeOf(ctx, c)
	if err != nil {
		return err
	}
	pl, pr := orient(t.side, nil, c.row)
	if t.insert {
		if d == 0 {
			j.emit(types.Delete, pl, pr)
		}
		j.emit(types.Insert, l, r)
		return other.setDegree(c, d+1)
	}
	j.emit(types.Delete, l, r)
	if d == 1 {
		j.emit(types.Insert, pl, pr)
	}
	return other.setDegree(c, d-1)
}

// finish ends a row: an outer row without matches is emitted padded, and
// the row is stored in (or removed from) its side with its degree. A row
// whose key can never match is not stored: it contributes only its padded
// form, which needs no state to retract.
func (j *HashJoin) finish(t *rowTask) error {
	j.task = nil
	j.amp.finished(t)
	defer clear(t.key) // the reused key must not keep this row's datums alive
	own := j.sides[t.side]
	if own.outer && t.count == 0 {
		l, r := orient(t.side, t.row, nil)
		j.emit(opOf(t.insert), l, r)
	}
	if !t.keyOK {
		return nil
	}
	if t.insert {
		return own.store(t.key, t.row, t.count)
	}
	if own.deferred != nil {
		if err := own.deferred.writeOut(); err != nil { // the row may be in the list
			return err
		}
	}
	return own.remove(t.key, t.row, t.count)
}

// emit appends one output row; nil left or right means NULL padding.
func (j *HashJoin) emit(op types.Op, left, right types.Row) {
	nl := len(j.sp.sides[0].types)
	row := j.outRow
	for i, o := range j.sp.output {
		switch {
		case o < 0: // NULL (plan.NullUnread)
			row[i] = nil
		case o < nl && left != nil:
			row[i] = left[o]
		case o >= nl && right != nil:
			row[i] = right[o-nl]
		default:
			row[i] = nil
		}
	}
	c := j.out.Append(op, row)
	clear(row) // hold no datums past the call
	if c != nil {
		j.ready = append(j.ready, c)
	}
}

func opOf(insert bool) types.Op {
	if insert {
		return types.Insert
	}
	return types.Delete
}

// orient returns (left, right) for a row from side s and a row from the
// other side.
func orient(s int, mine, other types.Row) (types.Row, types.Row) {
	if s == 0 {
		return mine, other
	}
	return other, mine
}

// Release closes the candidate iterator of a row still being processed:
// a join stopped in the middle of a row's matches (a drop during a stall)
// never reaches the end of that iterator. The compute node calls it once
// the actor's goroutines have exited (stream.Releaser).
func (j *HashJoin) Release() {
	if t := j.task; t != nil && t.src != nil && !t.srcEnded {
		t.src.close()
		t.srcEnded = true
	}
}
