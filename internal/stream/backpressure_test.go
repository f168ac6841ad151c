package stream

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/types"
)

// countingSource emits a barrier, then chunks forever, counting pulls.
type countingSource struct{ pulls atomic.Int64 }

func (c *countingSource) Next(ctx context.Context) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, err
	}
	if c.pulls.Add(1) == 1 {
		return NewBarrier(1), nil
	}
	return TextChunk(ii, "+ 1 1"), nil
}
func (c *countingSource) Schema() []types.Type { return ii }

// settle gives a producer that is wrongly unbounded time to run ahead; the
// assertions after it hold however long it is, so a loaded machine can
// only make the test weaker, never flaky.
func settle() { time.Sleep(30 * time.Millisecond) }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSlowConsumerBlocksProducer: with nobody reading, an actor fills its
// bounded output and then stops pulling its input: it has pulled at most
// the channel's capacity plus the one message it is trying to send. Each
// message the consumer takes lets exactly one more through. Cancelling the
// actor while it is blocked on the full channel ends it.
func TestSlowConsumerBlocksProducer(t *testing.T) {
	const capacity = 4
	out, in := NewChannel(1, 2, capacity)
	src := &countingSource{}
	a := NewActor(1, 1, src, []Dispatcher{&SimpleDispatcher{Out: out}}, sinkFunc(func(ActorID, uint64) {}), NewThrottle())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	waitFor(t, "the channel to fill", func() bool { return out.Len() == capacity })
	settle()
	if got := src.pulls.Load(); got > capacity+1 {
		t.Fatalf("producer pulled %d messages into a channel of %d: not back-pressured", got, capacity)
	}
	for taken := 1; taken <= 3; taken++ {
		<-in.ch
		waitFor(t, "the freed slot to refill", func() bool { return out.Len() == capacity })
		settle()
		if got := src.pulls.Load(); got > int64(capacity+1+taken) {
			t.Fatalf("after %d taken, producer pulled %d", taken, got)
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled blocked producer returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a producer blocked on a full channel ignored cancellation")
	}
}

// TestOneSlowOutputBlocksBroadcast: a broadcast producer whose one output
// is drained and the other is not stalls on the slow one; the fast
// consumer gets no more than the slow channel lets through.
func TestOneSlowOutputBlocksBroadcast(t *testing.T) {
	const capacity = 2
	fast, fastIn := NewChannel(1, 2, 64)
	slow, _ := NewChannel(1, 3, capacity)
	src := &countingSource{}
	a := NewActor(1, 1, src, []Dispatcher{&BroadcastDispatcher{Outs: []*Output{slow, fast}}},
		sinkFunc(func(ActorID, uint64) {}), NewThrottle())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	waitFor(t, "the slow channel to fill", func() bool { return slow.Len() == capacity })
	settle()
	if got := src.pulls.Load(); got > capacity+1 {
		t.Fatalf("producer pulled %d with a slow output of capacity %d", got, capacity)
	}
	if got := len(fastIn.ch); got > capacity {
		t.Fatalf("fast output got %d messages past a slow output of capacity %d", got, capacity)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// gatedSource emits nothing until its gate opens, then its script.
type gatedSource struct {
	gate chan struct{}
	*MockSource
}

func (g *gatedSource) Next(ctx context.Context) (Message, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
	return g.MockSource.Next(ctx)
}
