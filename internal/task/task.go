// Package task is the one way Sluice starts goroutines. A Group is an
// errgroup whose goroutines turn a panic into an error (with the stack),
// cancel their siblings on the first error, and are always waited for, so a
// test's goleak check sees nothing left behind.
package task

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
)

// PanicError is a panic recovered in a goroutine of a Group.
type PanicError struct {
	Name  string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("panic in %s: %v\n%s", e.Name, e.Value, e.Stack)
}

// Group runs goroutines that share a context.
type Group struct {
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	mu     struct {
		sync.Mutex
		err error
		// running counts live goroutines; idle is closed when it drops to
		// zero (and replaced when it rises again).
		running int
		idle    chan struct{}
	}
}

// NewGroup returns a group and the context its goroutines run under; the
// context is cancelled by the first failing goroutine or by Cancel.
func NewGroup(ctx context.Context) (*Group, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Group{cancel: cancel}, ctx
}

// Go starts fn in a goroutine. A returned error or a panic cancels the
// group; the first one is what Wait returns.
func (g *Group) Go(ctx context.Context, name string, fn func(ctx context.Context) error) {
	g.wg.Add(1)
	g.mu.Lock()
	if g.mu.running == 0 {
		g.mu.idle = make(chan struct{})
	}
	g.mu.running++
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		defer g.exited()
		err := Run(ctx, name, fn)
		if err != nil {
			g.fail(err)
		}
	}()
}

func (g *Group) exited() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.running--
	if g.mu.running == 0 {
		close(g.mu.idle)
	}
}

// Idle returns a channel closed once no goroutine of the group is running,
// so a caller can wait for the group with a deadline (select on it and
// ctx.Done()) without starting a goroutine of its own.
func (g *Group) Idle() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.running == 0 {
		done := make(chan struct{})
		close(done)
		return done
	}
	return g.mu.idle
}

// Run calls fn, turning a panic into a *PanicError.
func Run(ctx context.Context, name string, fn func(ctx context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Name: name, Value: r, Stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

func (g *Group) fail(err error) {
	g.mu.Lock()
	if g.mu.err == nil {
		g.mu.err = err
	}
	g.mu.Unlock()
	g.cancel(err)
}

// Cancel cancels the group's context without recording an error.
func (g *Group) Cancel() { g.cancel(context.Canceled) }

// Wait waits for every goroutine and returns the first error.
func (g *Group) Wait() error {
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.err
}

// Err returns the first error so far without waiting.
func (g *Group) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.err
}
