package stream

import (
	"context"
	"sync"
)

// DefaultChannelCapacity is how many messages an exchange channel buffers
// before its producer blocks (back-pressure).
const DefaultChannelCapacity = 16

// Output is the sending end of the exchange channel from one actor to one
// downstream actor. Sends block while the channel is full, which is how a
// slow consumer back-pressures its producers.
//
// An output can be detached: the downstream actor is going away on purpose
// (DROP, CANCEL). Detach is the graceful notice the decoupled-drop design
// needs: after it, Send drops messages and returns nil at once — a producer
// blocked on a full channel to a dropped job is released immediately, and a
// removed output is not an error. The notice is a message (Detach), not a
// side effect of closing the channel, so it works unchanged when exchange
// crosses a network.
type Output struct {
	// Actor is the downstream actor.
	Actor ActorID
	ch    chan Message

	detachOnce sync.Once
	detached   chan struct{}
	closeOnce  sync.Once
	// stats, when set, are the sending actor's (OutputBlocked).
	stats *ActorStats
}

// Input is the receiving end of an exchange channel.
type Input struct {
	// Upstream is the sending actor.
	Upstream ActorID
	ch       chan Message
	// stats, when set, are the receiving actor's (RowsIn, InputBlocked).
	stats *ActorStats
}

// CountFor makes the channel count into the stats of the actors at its
// two ends: from, the sender's, and to, the receiver's (either may be
// nil).
func CountFor(o *Output, in *Input, from, to *ActorStats) { o.stats, in.stats = from, to }

// NewChannel returns both ends of a bounded channel from upstream to
// downstream.
func NewChannel(upstream, downstream ActorID, capacity int) (*Output, *Input) {
	if capacity <= 0 {
		capacity = DefaultChannelCapacity
	}
	ch := make(chan Message, capacity)
	return &Output{Actor: downstream, ch: ch, detached: make(chan struct{})},
		&Input{Upstream: upstream, ch: ch}
}

// Send delivers msg, blocking while the channel is full. It returns nil
// without delivering when the output has been detached, and ctx.Err() when
// the sending actor is cancelled.
func (o *Output) Send(ctx context.Context, msg Message) error {
	select {
	case <-o.detached:
		return nil
	default:
	}
	select {
	case o.ch <- msg:
		return nil
	default: // full: the wait is backpressure
	}
	if o.stats != nil {
		o.stats.OutputBlocked.begin()
		defer o.stats.OutputBlocked.end()
	}
	select {
	case o.ch <- msg:
		return nil
	case <-o.detached:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Detach marks the output as removed on purpose. It is idempotent and
// never blocks.
func (o *Output) Detach() { o.detachOnce.Do(func() { close(o.detached) }) }

// Detached reports whether Detach was called.
func (o *Output) Detached() bool {
	select {
	case <-o.detached:
		return true
	default:
		return false
	}
}

// Close ends the channel from the producer's side. A consumer that has not
// been detached treats this as a fault (ErrUpstreamClosed). Only the
// producing actor calls Close, once it will send no more.
func (o *Output) Close() { o.closeOnce.Do(func() { close(o.ch) }) }

// Len returns the number of buffered messages (for metrics and tests).
func (o *Output) Len() int { return len(o.ch) }
