package storage

import (
	"context"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// When Pebble stops taking writes (a write stall: its memtables wait for
// a flush, or level 0 for compactions, as when every sstable write fails
// on a bad disk), a write that enters Pebble waits inside it, out of
// reach of any context. So DML appends wait here instead, outside Pebble
// and honouring ctx: a statement_timeout or a cancel ends such a
// statement with 57014, saying why, and nothing of it was written. Only
// the append already inside Pebble when the stall began (and holding the
// append turn) waits for the disk. Appends take their turn (a token, not
// the log's mutex) with ctx too, so none queues behind that one where ctx
// cannot reach it.
type writeStall struct {
	mu      sync.Mutex
	depth   int           // stalls begun and not ended
	ended   chan struct{} // closed when depth returns to 0
	reason  string
	lastErr error // the latest failed flush or compaction
}

// listen hooks the stall into Pebble's events. Pebble calls them with its
// own mutex held: they only record.
func (w *writeStall) listen(l *pebble.EventListener, logger pebble.Logger) {
	l.WriteStallBegin = func(info pebble.WriteStallBeginInfo) { w.begin(info.Reason) }
	l.WriteStallEnd = w.end
	l.BackgroundError = func(err error) {
		w.failed(err)
		logger.Errorf("background error: %s", err)
	}
}

func (w *writeStall) begin(reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.depth == 0 {
		w.ended = make(chan struct{})
	}
	w.depth++
	w.reason = reason
}

func (w *writeStall) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.depth == 0 {
		return
	}
	if w.depth--; w.depth == 0 {
		close(w.ended)
		w.ended, w.reason, w.lastErr = nil, "", nil
	}
}

func (w *writeStall) failed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastErr = err
}

// stalled returns the channel closed when the current stall ends, nil
// when there is none.
func (w *writeStall) stalled() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// wait returns once the store takes writes, or the error saying why ctx
// ended first.
func (w *writeStall) wait(ctx context.Context) error {
	for {
		ch := w.stalled()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return w.canceled(ctx)
		}
	}
}

// canceled is ctx's end (its cause when that is an SQL error, such as
// statement_timeout's) with a detail on the stall.
func (w *writeStall) canceled(ctx context.Context) error {
	e, ok := sqlerr.As(context.Cause(ctx))
	if !ok {
		e = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	reason, last, stalled := w.state()
	if !stalled {
		return e // ctx ended while waiting for the turn, not for the store
	}
	detail := fmt.Sprintf("The store is not taking writes (%s)", reason)
	if last != nil {
		detail += fmt.Sprintf("; its last background error: %v", last)
	}
	return e.WithDetail(detail + ". Nothing of this statement was written.").WithHint(
		"Check the disk under the data directory; writes resume by themselves once the store can flush again.")
}

// appendTurn serialises DML appends into Pebble's commit pipeline.
type appendTurn chan struct{}

// enterAppend waits, with ctx, until the store takes writes and it is
// this append's turn; the caller calls the returned func when its batch
// is in the pipeline.
func (s *Store) enterAppend(ctx context.Context) (func(), error) {
	for {
		if err := s.stall.wait(ctx); err != nil {
			return nil, err
		}
		select {
		case s.turn <- struct{}{}:
		case <-ctx.Done():
			return nil, s.stall.canceled(ctx)
		}
		if s.stall.stalled() == nil {
			return func() { <-s.turn }, nil
		}
		<-s.turn // stalled while it waited: wait outside again
	}
}

// state is the current stall's reason and last background error, and
// whether there is one.
func (w *writeStall) state() (string, error, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason, w.lastErr, w.ended != nil
}

// WriteStalled reports whether Pebble is stalling writes now, and why.
func (s *Store) WriteStalled() (string, bool) {
	reason, _, stalled := s.stall.state()
	return reason, stalled
}
