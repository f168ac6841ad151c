package overtake

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Gate passes its input on unchanged while its job runs. While the job is
// paused, or chunks are still queued from a time it was, the gate reads
// its input first and queues chunks, so barriers pass at once; paused, it
// passes nothing else on; resumed, it passes one queued chunk per call,
// reading input before each. Watermarks wait behind queued chunks (a
// later watermark is always safe). A rate limit alone does not queue: it
// is enforced where rows enter the job (sources, backfill).
type Gate struct {
	in       stream.Executor
	g        *task.Group
	throttle *stream.Throttle
	q        *Queue
	// pump reads the input once the gate has been slowed, so a read can
	// also end at a change of the throttle; until then the gate calls
	// the input itself and costs nothing.
	pump     *stream.Aligned
	started  bool
	restored bool
	held     []*stream.Watermark
	behind   *stream.Behind
	// stats are the actor's: once the pump reads the input, it counts the
	// actor's input waits, but not a paused one's.
	stats *stream.ActorStats
	// empty mirrors q.Len() == 0 for the input's pump (PassFresh).
	empty atomic.Bool
	// lastBarrier is the time of the last barrier passed: a chunk
	// arriving now is input of the epoch it began.
	lastBarrier types.DTimestamptz
	// owe: the last read passed a message on, so a queued chunk goes
	// next (a stream of barriers never starves the queue).
	owe bool
}

var _ stream.Executor = (*Gate)(nil)

// NewGate returns gate number gate of env's actor over in; it keeps its
// queue in the job's gate table t.
func NewGate(env *stream.Env, g *task.Group, t *storage.StateTable, gate int, in stream.Executor) *Gate {
	gt := &Gate{in: in, g: g, throttle: env.Throttle,
		q: NewQueue(t, env.Index, gate, in.Schema(), env.ChunkSizeOrDefault())}
	gt.empty.Store(true)
	if env.Stats != nil {
		gt.behind, gt.stats = env.Stats.NewBehind(), env.Stats
	}
	return gt
}

// PassFresh implements stream.FreshPassing: the input's FreshRows pass as
// they are while the gate passes its input on; a FreshRows message that
// must wait is decoded into a chunk first.
func (gt *Gate) PassFresh(take func() bool) {
	if in, ok := gt.in.(stream.FreshPassing); ok {
		in.PassFresh(func() bool { return gt.empty.Load() && !gt.throttle.Paused() && take() })
	}
}

// Schema is the input's.
func (gt *Gate) Schema() []types.Type { return gt.in.Schema() }

// Next returns the next message to pass on.
func (gt *Gate) Next(ctx context.Context) (stream.Message, error) {
	if !gt.restored {
		gt.restored = true
		if err := gt.q.Restore(ctx); err != nil {
			return stream.Message{}, err
		}
		gt.empty.Store(gt.q.Len() == 0)
	}
	for {
		if gt.pump == nil {
			if !gt.started || (!gt.throttle.Paused() && gt.q.Len() == 0) {
				msg, err := gt.in.Next(ctx)
				if err != nil {
					return stream.Message{}, err
				}
				if msg.Barrier != nil || !gt.throttle.Paused() {
					return gt.pass(msg)
				}
				// Paused while it waited: the message waits too.
				gt.pump = stream.NewAligned(ctx, gt.g, []stream.Executor{gt.in}, gt.stats)
				if msg, ok, err := gt.handle(msg); err != nil || ok {
					return msg, err
				}
				continue
			}
			gt.pump = stream.NewAligned(ctx, gt.g, []stream.Executor{gt.in}, gt.stats)
		}
		msg, ok, err := gt.step(ctx)
		if err != nil || ok {
			return msg, err
		}
	}
}

// step does one piece of the gate's work; ok says msg is to pass on.
func (gt *Gate) step(ctx context.Context) (stream.Message, bool, error) {
	th := gt.throttle
	if gt.q.Len() > 0 && !th.Paused() {
		if !gt.owe {
			if msg, ok, err := gt.take(ctx, stream.Wait{Poll: true}); err != nil || ok {
				gt.owe = ok
				return msg, ok, err
			}
		}
		gt.owe = false
		c, err := gt.q.Pop(ctx)
		gt.empty.Store(gt.q.Len() == 0)
		return stream.ChunkMsg(c), err == nil, err
	}
	if gt.q.Len() == 0 && !th.Paused() && len(gt.held) > 0 {
		w := gt.held[0]
		gt.held = gt.held[1:]
		return stream.Message{Watermark: w}, true, nil
	}
	wake := th.Changed() // before the checks: a later change wakes the wait
	if !th.Paused() && gt.q.Len() > 0 {
		return stream.Message{}, false, nil
	}
	return gt.take(ctx, stream.Wait{Wake: wake, Paused: th.Paused()})
}

// take reads one input message as w allows and handles it; ok says msg
// is to pass on.
func (gt *Gate) take(ctx context.Context, w stream.Wait) (stream.Message, bool, error) {
	_, msg, got, err := gt.pump.NextOr(ctx, w)
	if err != nil || !got {
		return stream.Message{}, false, err
	}
	return gt.handle(msg)
}

// handle passes msg on (ok) or keeps it: a barrier passes, a chunk or a
// watermark waits behind queued chunks or while paused.
func (gt *Gate) handle(msg stream.Message) (stream.Message, bool, error) {
	waiting := gt.q.Len() > 0 || gt.throttle.Paused()
	queue := waiting
	if msg.Fresh != nil && queue {
		c, err := msg.Fresh.DecodeOnly(gt.Schema(), nil)
		if err != nil {
			return stream.Message{}, false, fmt.Errorf("overtake: gate: %w", err)
		}
		msg = stream.ChunkMsg(c)
	}
	switch {
	case msg.Barrier != nil:
		m, err := gt.pass(msg)
		return m, err == nil, err
	case msg.Chunk != nil && queue:
		gt.q.Push(msg.Chunk, gt.lastBarrier)
		gt.empty.Store(false)
		return stream.Message{}, false, nil
	case msg.Watermark != nil && waiting:
		gt.hold(msg.Watermark)
		return stream.Message{}, false, nil
	}
	return msg, true, nil
}

// hold keeps w behind the queued chunks, replacing a lower one of its
// column.
func (gt *Gate) hold(w *stream.Watermark) {
	for k, h := range gt.held {
		if h.Col == w.Col {
			if types.Compare(w.Value, h.Value) > 0 {
				gt.held[k] = w
			}
			return
		}
	}
	gt.held = append(gt.held, w)
}

// pass returns msg, checkpointing the queue at a barrier.
func (gt *Gate) pass(msg stream.Message) (stream.Message, error) {
	b := msg.Barrier
	if b == nil {
		return msg, nil
	}
	gt.started = true
	if gt.q.Stored() {
		if err := gt.q.Checkpoint(b.Epoch); err != nil {
			return stream.Message{}, fmt.Errorf("overtake: gate: %w", err)
		}
	}
	gt.behind.AtBarrier(b, gt.q.Len() > 0, gt.q.Since())
	gt.lastBarrier = b.Time
	return msg, nil
}
