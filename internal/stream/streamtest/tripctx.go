package streamtest

import (
	"context"
	"sync"

	"github.com/sluice-db/sluice/internal/stream"
)

// TripCtx models a cancel that lands while a call is running: once armed,
// it lets `grace` Err calls through (the checks at the entry of the call)
// and reports cancellation from then on. Counting, not timing, makes
// "mid-call" deterministic in cancellation tests.
type TripCtx struct {
	context.Context
	mu     sync.Mutex
	armed  bool
	grace  int
	done   chan struct{}
	closed bool
}

// NewTripCtx returns a disarmed TripCtx.
func NewTripCtx() *TripCtx {
	return &TripCtx{Context: context.Background(), done: make(chan struct{})}
}

// Arm makes the context report cancellation after grace more Err calls.
func (c *TripCtx) Arm(grace int) { c.mu.Lock(); c.armed, c.grace = true, grace; c.mu.Unlock() }

// Err implements context.Context.
func (c *TripCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.armed:
		return nil
	case c.grace > 0:
		c.grace--
		return nil
	case !c.closed:
		close(c.done)
		c.closed = true
	}
	return context.Canceled
}

// Done implements context.Context; it is closed once Err has reported
// cancellation.
func (c *TripCtx) Done() <-chan struct{} { return c.done }

// FirstFullChunk pulls e's first message, which must be a barrier, and then
// its first chunk, which must hold size rows: the start of a long emission
// that a cancellation test then interrupts.
func FirstFullChunk(t TB, ctx context.Context, e stream.Executor, size int) {
	t.Helper()
	if msg, err := e.Next(ctx); err != nil || msg.Barrier == nil {
		t.Fatalf("first message %v, %v; want a barrier", msg, err)
	}
	if msg, err := e.Next(ctx); err != nil || msg.Chunk == nil || msg.Chunk.Cardinality() != size {
		t.Fatalf("want a full first chunk of %d rows, got %v, %v", size, msg, err)
	}
}
