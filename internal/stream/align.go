package stream

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/task"
)

// ErrUpstreamClosed is returned when an input channel closes without the
// graceful-detach notice: the upstream actor died, which is a fault that
// leads to recovery.
var ErrUpstreamClosed = errors.New("stream: upstream channel closed without notice")

// aligner reads from several channels and aligns their barriers: once input
// i has delivered barrier B, nothing more is taken from i until every input
// has delivered B; then B is returned once. Merge (over exchange channels)
// and Aligned (over executors) share it.
type aligner struct {
	chans []<-chan Message
	// errs[i], when set before chans[i] is closed, is why it closed.
	errs    []error
	blocked []bool
	pending *Barrier
	nBlock  int
	next    int // round-robin start, for fairness
	// waited, when set, adds up the nanoseconds receive blocked, unless
	// skipWaits is set and true (an Aligned above counts them).
	waited    *WaitClock
	skipWaits *atomic.Bool
}

func newAligner(chans []<-chan Message) *aligner {
	return &aligner{chans: chans, errs: make([]error, len(chans)), blocked: make([]bool, len(chans))}
}

// next returns the next message and the index of its input; an aligned
// barrier comes with index -1.
func (a *aligner) nextMsg(ctx context.Context) (int, Message, error) {
	i, msg, _, err := a.nextOr(ctx, Wait{})
	return i, msg, err
}

// Wait says how long a read of an Aligned may block: Poll takes only a
// message already there; otherwise the read also ends when Wake is closed
// (nil: never). Paused says the reader is paused, so its wait is not
// counted as waiting for input.
type Wait struct {
	Poll   bool
	Paused bool
	Wake   <-chan struct{}
}

// nextOr is nextMsg that gives up as w says, reporting got false.
func (a *aligner) nextOr(ctx context.Context, w Wait) (int, Message, bool, error) {
	for {
		i, msg, ok, err := a.receive(ctx, w)
		if err != nil {
			return 0, Message{}, false, err
		}
		if i < 0 {
			return 0, Message{}, false, nil
		}
		if !ok {
			if e := a.errs[i]; e != nil {
				return i, Message{}, false, e
			}
			return i, Message{}, false, fmt.Errorf("input %d: %w", i, ErrUpstreamClosed)
		}
		if msg.Barrier == nil {
			return i, msg, true, nil
		}
		if b, done, err := a.onBarrier(i, msg.Barrier); err != nil || done {
			return -1, BarrierMsg(b), err == nil, err
		}
	}
}

func (a *aligner) onBarrier(i int, b *Barrier) (*Barrier, bool, error) {
	if a.pending == nil {
		a.pending = b
	} else if a.pending.Epoch != b.Epoch {
		return nil, false, fmt.Errorf("stream: barrier misaligned: input %d sent epoch %d while aligning %d", i, b.Epoch, a.pending.Epoch)
	}
	a.blocked[i] = true
	a.nBlock++
	if a.nBlock < len(a.chans) {
		return nil, false, nil
	}
	out := a.pending
	a.pending, a.nBlock = nil, 0
	clear(a.blocked)
	return out, true, nil
}

// receive takes a ready message from an input not blocked by alignment,
// round-robin, or blocks on all of them (and w's channels); index -1 says
// w ended the wait.
func (a *aligner) receive(ctx context.Context, w Wait) (int, Message, bool, error) {
	n := len(a.chans)
	for k := 0; k < n; k++ {
		i := (a.next + k) % n
		if a.blocked[i] {
			continue
		}
		select {
		case m, ok := <-a.chans[i]:
			a.next = (i + 1) % n
			return i, m, ok, nil
		default:
		}
	}
	if w.Poll {
		return -1, Message{}, false, nil
	}
	if a.waited != nil && !w.Paused && (a.skipWaits == nil || !a.skipWaits.Load()) {
		a.waited.begin()
		defer a.waited.end()
	}
	// nil channels never become ready, so blocked inputs drop out of the
	// select.
	live := make([]<-chan Message, n)
	for i, ch := range a.chans {
		if !a.blocked[i] {
			live[i] = ch
		}
	}
	if n <= 2 {
		return selectTwo(ctx, live, w)
	}
	return selectMany(ctx, live, w)
}

func selectTwo(ctx context.Context, live []<-chan Message, w Wait) (int, Message, bool, error) {
	c0 := live[0]
	var c1 <-chan Message
	if len(live) > 1 {
		c1 = live[1]
	}
	select {
	case m, ok := <-c0:
		return 0, m, ok, nil
	case m, ok := <-c1:
		return 1, m, ok, nil
	case <-w.Wake:
		return -1, Message{}, false, nil
	case <-ctx.Done():
		return 0, Message{}, false, ctx.Err()
	}
}

// Aligned merges the input executors of a multi-input executor (join,
// union) with barrier alignment. Each input is pulled by its own goroutine,
// started in the caller's task.Group, that hands messages over an unbuffered
// channel, so no input is read ahead of what the consumer takes and every
// hand-off selects on cancellation.
type Aligned struct {
	*aligner
}

// NewAligned starts one pump per input under g. The pumps exit when ctx is
// cancelled or their input fails.
//
// stats, when set, are the actor's: the first Aligned of an actor counts
// the actor's waits for input (InputBlocked) where it waits for its pumps,
// and the merges under its pumps stop counting theirs, which run while
// the actor works and would count each wait once per input.
func NewAligned(ctx context.Context, g *task.Group, inputs []Executor, stats *ActorStats) *Aligned {
	chans := make([]<-chan Message, len(inputs))
	a := &Aligned{}
	sendChans := make([]chan Message, len(inputs))
	for i := range inputs {
		sendChans[i] = make(chan Message)
		chans[i] = sendChans[i]
	}
	a.aligner = newAligner(chans)
	if stats != nil && stats.alignedWaits.CompareAndSwap(false, true) {
		a.aligner.waited = &stats.InputBlocked
	}
	for i, in := range inputs {
		g.Go(ctx, fmt.Sprintf("align-input-%d", i), func(ctx context.Context) error {
			a.pump(ctx, i, in, sendChans[i])
			return nil
		})
	}
	return a
}

// pump pulls input i and hands its messages on. On an input error it
// records the error and closes the channel; the close publishes the error
// to the consumer.
func (a *Aligned) pump(ctx context.Context, i int, in Executor, ch chan<- Message) {
	for {
		msg, err := in.Next(ctx)
		if err != nil {
			a.errs[i] = err
			close(ch)
			return
		}
		select {
		case ch <- msg:
		case <-ctx.Done():
			return
		}
	}
}

// Next returns the next message and the index of the input it came from;
// an aligned barrier is returned with index -1.
func (a *Aligned) Next(ctx context.Context) (int, Message, error) {
	return a.nextMsg(ctx)
}

// NextOr is Next that gives up as w says: got is false when no message
// came.
func (a *Aligned) NextOr(ctx context.Context, w Wait) (i int, msg Message, got bool, err error) {
	return a.nextOr(ctx, w)
}
