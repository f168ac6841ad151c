package source

import (
	"context"

	"github.com/sluice-db/sluice/internal/task"
)

// background runs one blocking call (store.WaitDML, store.WaitCommitted,
// Throttle.Wait) on its own goroutine so that an executor can select on it
// together with its barrier inbox or upstream channel. The storage and
// throttle APIs block on a ctx rather than expose a channel, hence the
// goroutine; it lives only while the executor is blocked in one Next call
// and is always stopped and waited for before Next returns, so nothing
// outlives the call (goleak checks it).
type background struct {
	g    *task.Group
	done chan struct{}
	err  error // fn's result; written before done is closed
}

// startBackground runs fn under a private task group derived from ctx.
func startBackground(ctx context.Context, name string, fn func(context.Context) error) *background {
	g, gctx := task.NewGroup(ctx)
	bg := &background{g: g, done: make(chan struct{})}
	g.Go(gctx, name, func(ctx context.Context) error {
		defer close(bg.done)
		bg.err = fn(ctx)
		return nil
	})
	return bg
}

// result waits for fn and returns its error, or its panic as an error.
func (bg *background) result() error {
	<-bg.done
	if err := bg.g.Wait(); err != nil {
		return err
	}
	return bg.err
}

// stop cancels fn and waits for it; nil is a no-op.
func (bg *background) stop() {
	if bg == nil {
		return
	}
	bg.g.Cancel()
	_ = bg.g.Wait()
}

// doneChan returns the channel closed when fn returns; nil (never ready)
// for a nil background, so an unused wait drops out of a select.
func (bg *background) doneChan() <-chan struct{} {
	if bg == nil {
		return nil
	}
	return bg.done
}
