package engine

import (
	"context"
	"errors"
	"sync"
)

// createWaiters lets a DROP or CANCEL JOBS end at once the wait of a
// CREATE for its own job (foreground, or the background finisher). That
// wait may sit in a FLUSH behind another job's stuck barrier; without
// this it would return only when that barrier commits, holding a
// goroutine of a job that no longer exists.
type createWaiters struct {
	mu sync.Mutex
	m  map[uint32]map[*int]context.CancelCauseFunc
	// foreground marks the waits of foreground CREATEs (release).
	foreground map[*int]bool
}

// watch returns a ctx that a cancel of job id ends with errJobGone, and
// the func to call when the wait is over. A foreground wait (a CREATE's
// own) can also be released (errReleased).
func (w *createWaiters) watch(ctx context.Context, id uint32, foreground bool) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	key := new(int)
	w.mu.Lock()
	if w.m == nil {
		w.m = map[uint32]map[*int]context.CancelCauseFunc{}
	}
	if w.m[id] == nil {
		w.m[id] = map[*int]context.CancelCauseFunc{}
	}
	w.m[id][key] = cancel
	if foreground {
		if w.foreground == nil {
			w.foreground = map[*int]bool{}
		}
		w.foreground[key] = true
	}
	w.mu.Unlock()
	return ctx, func() {
		w.mu.Lock()
		delete(w.m[id], key)
		delete(w.foreground, key)
		if len(w.m[id]) == 0 {
			delete(w.m, id)
		}
		w.mu.Unlock()
		cancel(nil)
	}
}

// cancel ends every wait for job id.
func (w *createWaiters) cancel(id uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.m[id] {
		c(errJobGone)
	}
}

// release ends the foreground waits for job id with errReleased: their
// CREATEs return and the job is finished in the background.
func (w *createWaiters) release(id uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, c := range w.m[id] {
		if w.foreground[key] {
			c(errReleased)
		}
	}
}

// errReleased: the amplification guard paused or throttled a job while
// its CREATE waited; the CREATE returns and the job is created in the
// background.
var errReleased = errors.New("engine: the job goes on in the background")
