package stream

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
	behind []*atomic.Int64
}

// NewBehind registers an executor that lets barriers overtake its work
// (join/overtake.go) and returns where it says since when (unix
// nanoseconds) the work it holds has waited; 0: none.
func (s *ActorStats) NewBehind() *atomic.Int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &atomic.Int64{}
	s.behind = append(s.behind, b)
	return b
}

// BehindSince is the earliest time (unix nanoseconds) since which work of
// the actor has waited behind a barrier that overtook it, so its view
// reflects its input only as of then; 0: nothing overtaken.
func (s *ActorStats) BehindSince() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var since int64
	for _, b := range s.behind {
		if v := b.Load(); v != 0 && (since == 0 || v < since) {
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
