package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// BarrierSink is the actor's handle on the barrier manager: Collect reports
// that the actor has passed a barrier on. It must not block for long; the
// barrier worker owns the state.
type BarrierSink interface {
	Collect(ctx context.Context, actor ActorID, epoch uint64) error
}

// Actor runs one executor chain and dispatches its output. It is one
// goroutine (Run); everything else talks to it through Control, which
// never waits for data: it cancels, throttles or detaches at once.
type Actor struct {
	ID    ActorID
	JobID uint32
	root  Executor
	sink  BarrierSink
	// Throttle is shared with the chain's source executors.
	Throttle *Throttle
	// Stats, when set before Run, count the rows it dispatches.
	Stats *ActorStats

	mu struct {
		sync.Mutex
		downstream  *Downstream
		dispatchers []Dispatcher
		cancel      context.CancelCauseFunc
		stopped     bool // a stop arrived, maybe before Run started
	}
}

// NewActor returns an actor running root and sending to dispatchers.
func NewActor(id ActorID, job uint32, root Executor, dispatchers []Dispatcher, sink BarrierSink, throttle *Throttle) *Actor {
	a := &Actor{ID: id, JobID: job, root: Checked(fmt.Sprintf("actor %d", id), root), sink: sink, Throttle: throttle}
	a.mu.dispatchers = dispatchers
	return a
}

// TrackDownstream keeps d up to date with whether the actor has any
// dispatcher. Call it before Run.
func (a *Actor) TrackDownstream(d *Downstream) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.downstream = d
	d.note(a.mu.dispatchers)
}

// ErrStopped is the cause of an actor's cancellation by an immediate drop.
var ErrStopped = errors.New("stream: actor stopped by control")

// Run pulls the chain until a stop barrier for this actor, an error, or
// cancellation. On an error of its own it closes its outputs so that
// downstream actors see a fault; when it is cancelled (a deliberate
// teardown) or stopped gracefully it leaves them open, because its
// downstream is being torn down too or was detached first.
func (a *Actor) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	a.mu.Lock()
	a.mu.cancel = cancel
	if a.mu.stopped {
		cancel(ErrStopped)
	}
	a.mu.Unlock()
	err := a.loop(ctx)
	if err != nil && ctx.Err() == nil {
		a.closeOutputs()
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrStopped) {
		return nil
	}
	return err
}

func (a *Actor) loop(ctx context.Context) error {
	for {
		msg, err := a.root.Next(ctx)
		if err != nil {
			return err
		}
		if msg.Barrier != nil {
			stop, err := a.handleBarrier(ctx, msg.Barrier)
			if err != nil || stop {
				return err
			}
			continue
		}
		if err := a.dispatch(ctx, msg); err != nil {
			return err
		}
	}
}

// handleBarrier applies an Add mutation (new dispatchers first, so the new
// job's first message is this barrier), passes the barrier on, and
// reports it collected.
func (a *Actor) handleBarrier(ctx context.Context, b *Barrier) (stop bool, err error) {
	if add, ok := b.Mutation.(*AddMutation); ok {
		if ds := add.Dispatchers[a.ID]; len(ds) > 0 {
			a.mu.Lock()
			a.mu.dispatchers = append(append([]Dispatcher(nil), a.mu.dispatchers...), ds...)
			a.mu.downstream.note(a.mu.dispatchers)
			a.mu.Unlock()
		}
	}
	if err := a.dispatch(ctx, BarrierMsg(b)); err != nil {
		return false, err
	}
	if err := a.sink.Collect(ctx, a.ID, b.Epoch); err != nil {
		return false, err
	}
	return b.IsStop(a.ID), nil
}

func (a *Actor) dispatch(ctx context.Context, msg Message) error {
	a.mu.Lock()
	ds := a.mu.dispatchers
	a.mu.Unlock()
	if a.Stats != nil {
		a.Stats.RowsOut.Add(chunkRows(msg))
	}
	for _, d := range ds {
		if err := d.Dispatch(ctx, msg); err != nil {
			return err
		}
	}
	return nil
}

func (a *Actor) closeOutputs() {
	a.mu.Lock()
	ds := a.mu.dispatchers
	a.mu.Unlock()
	for _, d := range ds {
		for _, o := range d.Outputs() {
			o.Close()
		}
	}
}
