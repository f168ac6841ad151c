package stream

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-db/sluice/internal/types"
)

// ActorStats are one actor's counters for metrics. They are added to per
// message, never per row, on the goroutines that move the messages, and
// read at scrape time.
//
// Blocked time says where an actor waits: on input, its upstream is slow
// (or idle); on output, its downstream is (backpressure). A join stuck on
// one huge key shows as its upstreams blocked on output and its
// downstreams blocked on input.
type ActorStats struct {
	// RowsIn are the rows of the chunks the actor's exchange inputs
	// delivered; RowsOut those of the chunks it dispatched.
	RowsIn, RowsOut atomic.Int64
	// InputBlocked and OutputBlocked are the time spent waiting for a
	// message on its exchange inputs, and for room in a full output
	// channel, the wait in progress included.
	InputBlocked, OutputBlocked WaitClock
	// alignedWaits: an Aligned counts InputBlocked, not the merges.
	alignedWaits atomic.Bool
	// AmpLimit is the job's amplification limit (0: none): a join that
	// emits more rows for one input row reports it (Env.OnAmplification).
	AmpLimit atomic.Int64
	// RowErrors counts the row-level expression errors its executors
	// turned into NULL.
	RowErrors atomic.Int64

	mu     sync.Mutex
	joins  []*JoinStats
	behind []*Behind
}

// Behind is what an executor that lets barriers overtake its work
// (stream/overtake, join/overtake.go) reports: since when the work it
// holds has waited, and the last barrier that overtook some.
type Behind struct {
	since atomic.Int64  // unix nanoseconds; 0: no work held
	epoch atomic.Uint64 // the last epoch whose barrier overtook work
}

// AtBarrier notes, as barrier b passes, whether the executor holds work
// it overtook, and since: the time of the last barrier before the oldest
// of that work came (0: unknown, restored after a restart; the first
// barrier since is taken). Only the executor's goroutine calls it.
func (x *Behind) AtBarrier(b *Barrier, holding bool, since types.DTimestamptz) {
	if x == nil {
		return
	}
	if !holding {
		x.since.Store(0)
		return
	}
	x.epoch.Store(b.Epoch)
	switch {
	case since != 0:
		x.since.Store(since.Time().UnixNano())
	case x.since.Load() == 0 && b.Time != 0:
		x.since.Store(b.Time.Time().UnixNano())
	}
}

// NewBehind registers an executor that lets barriers overtake its work.
func (s *ActorStats) NewBehind() *Behind {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &Behind{}
	s.behind = append(s.behind, b)
	return b
}

// BehindEpoch is the last epoch whose barrier overtook work of the
// actor (0: none ever): once a later epoch has committed with no work
// held, its view reflects all its input up to that epoch.
func (s *ActorStats) BehindEpoch() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var e uint64
	for _, b := range s.behind {
		e = max(e, b.epoch.Load())
	}
	return e
}

// BehindSince is the earliest time (unix nanoseconds) since which work of
// the actor has waited behind a barrier that overtook it, so its view
// reflects its input only as of then; 0: nothing overtaken.
func (s *ActorStats) BehindSince() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var since int64
	for _, b := range s.behind {
		if v := b.since.Load(); v != 0 && (since == 0 || v < since) {
			since = v
		}
	}
	return since
}

// AddJoin registers a join executor's amplification counters with its
// actor.
func (s *ActorStats) AddJoin(j *JoinStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.joins = append(s.joins, j)
}

// Joins returns the actor's joins' counters.
func (s *ActorStats) Joins() []*JoinStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.joins)
}

// WaitClock adds up the time spent in one kind of wait, one wait at a
// time. A wait in progress counts as it goes: an actor blocked for minutes
// behind a stuck join shows it at every scrape, not when the wait ends.
type WaitClock struct {
	mu    sync.Mutex
	total time.Duration
	since time.Time // the wait in progress began (zero: none)
}

// begin starts a wait; end ends it.
func (w *WaitClock) begin() {
	w.mu.Lock()
	w.since = time.Now()
	w.mu.Unlock()
}

func (w *WaitClock) end() {
	w.mu.Lock()
	if !w.since.IsZero() { // one wait at a time; never count from year 1
		w.total += time.Since(w.since)
	}
	w.since = time.Time{}
	w.mu.Unlock()
}

// Total is the time waited so far, the wait in progress included.
func (w *WaitClock) Total() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.total
	if !w.since.IsZero() {
		t += time.Since(w.since)
	}
	return t
}

// chunkRows is the rows of a chunk or fresh-rows message, 0 for any
// other.
func chunkRows(msg Message) int64 {
	switch {
	case msg.Chunk != nil:
		return int64(msg.Chunk.Cardinality())
	case msg.Fresh != nil:
		return int64(msg.Fresh.Len())
	}
	return 0
}
