package stream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-db/sluice/internal/types"
	"golang.org/x/time/rate"
)

// minBurst is the smallest token bucket, in rows: four default chunks.
const minBurst = 4 * types.DefaultChunkSize

// Throttle is an actor's pace: unlimited, limited to a rate of rows per
// second, or paused. The control channel changes it at any moment; an
// executor waiting in Wait sees the change at once, because every change
// closes the channel the waiters select on. It changes how fast a job runs,
// never what it computes, so it needs no barrier.
type Throttle struct {
	// slowed mirrors paused || limit >= 0, for executors that check it
	// per output chunk without the lock (Slowed).
	slowed atomic.Bool
	// stopped mirrors paused || limit == 0 (Paused).
	stopped atomic.Bool
	mu      struct {
		sync.Mutex
		paused  bool
		limit   int64 // rows per second; < 0 = unlimited, 0 = paused
		limiter *rate.Limiter
		changed chan struct{}
	}
}

// NewThrottle returns an unlimited, running throttle.
func NewThrottle() *Throttle {
	t := &Throttle{}
	t.mu.limit = -1
	t.mu.changed = make(chan struct{})
	return t
}

// SetRateLimit sets rows per second: < 0 removes the limit, 0 pauses.
func (t *Throttle) SetRateLimit(rowsPerSec int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.limit = rowsPerSec
	t.mu.limiter = nil
	if rowsPerSec > 0 {
		// The burst holds a few whole chunks, so a chunk waits as one
		// reservation: an executor interrupted by a barrier cancels the
		// reservation and, since the bucket keeps filling meanwhile, gets
		// the chunk through on a later try. With a burst below the chunk
		// size a chunk would be paid for in pieces, and an interruption
		// every barrier interval could waste the paid pieces forever.
		burst := int(max(rowsPerSec, minBurst))
		t.mu.limiter = rate.NewLimiter(rate.Limit(rowsPerSec), burst)
		// Start with an empty bucket: a new limit holds from the next row,
		// instead of letting a whole burst (thousands of rows for a small
		// limit) through first.
		t.mu.limiter.AllowN(time.Now(), burst)
	}
	t.notifyLocked()
}

// SetPaused pauses or resumes.
func (t *Throttle) SetPaused(p bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.paused = p
	t.notifyLocked()
}

// State returns the current settings.
func (t *Throttle) State() (paused bool, limit int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.paused, t.mu.limit
}

func (t *Throttle) notifyLocked() {
	t.slowed.Store(t.mu.paused || t.mu.limit >= 0)
	t.stopped.Store(t.mu.paused || t.mu.limit == 0)
	close(t.mu.changed)
	t.mu.changed = make(chan struct{})
}

// Slowed reports whether the actor is paused or rate limited: the user
// has said its job may fall behind, so barriers may overtake its queued
// work (join/overtake.go). It is one atomic load.
func (t *Throttle) Slowed() bool { return t != nil && t.slowed.Load() }

// Changed returns a channel closed at the next change of settings.
func (t *Throttle) Changed() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.changed
}

// Paused reports whether the actor is paused (or limited to 0 rows per
// second), with one atomic load.
func (t *Throttle) Paused() bool { return t != nil && t.stopped.Load() }

// Wait blocks until n more rows may pass, or ctx is done. A batch larger
// than one second's worth passes in pieces of the limiter's burst.
func (t *Throttle) Wait(ctx context.Context, n int) error {
	if t == nil {
		return ctx.Err()
	}
	for n > 0 {
		done, err := t.waitSome(ctx, &n)
		if err != nil || done {
			return err
		}
	}
	return ctx.Err()
}

// waitSome lets part of n pass (decrementing it), or waits for a change in
// settings; it reports done when nothing more needs to wait.
func (t *Throttle) waitSome(ctx context.Context, n *int) (done bool, err error) {
	t.mu.Lock()
	paused, lim, changed := t.mu.paused || t.mu.limit == 0, t.mu.limiter, t.mu.changed
	t.mu.Unlock()
	if paused {
		select {
		case <-changed:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if lim == nil {
		return true, nil
	}
	k := min(*n, lim.Burst())
	r := lim.ReserveN(time.Now(), k)
	delay := r.Delay()
	if delay == 0 {
		*n -= k
		return false, nil
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		*n -= k
		return false, nil
	case <-changed:
		r.Cancel()
		return false, nil
	case <-ctx.Done():
		r.Cancel()
		return false, ctx.Err()
	}
}
