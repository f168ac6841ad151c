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
	// InputBlocked and OutputBlocked are nanoseconds spent waiting for a
	// message on its exchange inputs, and for room in a full output
	// channel.
	InputBlocked, OutputBlocked atomic.Int64
	// alignedWaits: an Aligned counts InputBlocked, not the merges.
	alignedWaits atomic.Bool

	mu    sync.Mutex
	joins []*JoinStats
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

// addSince adds the time since start to c, in nanoseconds.
func addSince(c *atomic.Int64, start time.Time) { c.Add(int64(time.Since(start))) }

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
