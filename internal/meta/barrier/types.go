package barrier

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ActorID names one actor (one goroutine running a chain of executors).
// Actor ids are allocated by meta and never reused, so an id that is unknown
// here is either a bug in the caller or an actor that was already dropped.
type ActorID uint32

// JobID names one streaming job: one table, source or materialized view.
type JobID uint32

// Epoch is what a barrier carries: its own epoch and the epoch of the
// barrier injected before it. Prev lets an executor know which epoch the
// writes it staged since the last barrier belong to; after recovery Prev is
// the last committed epoch, because everything after it was discarded.
type Epoch struct {
	Curr uint64
	Prev uint64
}

func (e Epoch) String() string { return fmt.Sprintf("e=%d prev=%d", e.Curr, e.Prev) }

// JobSpec is one job's actors as the barrier manager needs to know them:
// which actors must collect every barrier and which of them are sources,
// the actors barriers are injected into. Sources is a subset of Actors. A
// view on an existing table has no sources of its own: its barriers come down
// from the table's source actors through the dispatchers.
type JobSpec struct {
	ID      JobID
	Actors  []ActorID
	Sources []ActorID
}

func (j JobSpec) String() string {
	return fmt.Sprintf("job=%d actors=%s sources=%s", j.ID, formatActors(j.Actors), formatActors(j.Sources))
}

// validate reports a spec that could not describe a real job.
func (j JobSpec) validate() error {
	if len(j.Actors) == 0 {
		return fmt.Errorf("job %d has no actors: %w", j.ID, ErrInvalidJob)
	}
	seen := make(map[ActorID]bool, len(j.Actors))
	for _, a := range j.Actors {
		if seen[a] {
			return fmt.Errorf("job %d lists actor %d twice: %w", j.ID, a, ErrInvalidJob)
		}
		seen[a] = true
	}
	for _, s := range j.Sources {
		if !seen[s] {
			return fmt.Errorf("job %d source %d is not one of its actors: %w", j.ID, s, ErrInvalidJob)
		}
	}
	return nil
}

// clone copies the slices so the caller may reuse its own.
func (j JobSpec) clone() JobSpec {
	return JobSpec{ID: j.ID, Actors: sortedCopy(j.Actors), Sources: sortedCopy(j.Sources)}
}

// Config tunes the coordinator. Zero fields take the defaults below.
type Config struct {
	// Interval is the time between periodic barriers (Tick injects when at
	// least this much time passed since the last injection).
	Interval time.Duration
	// MaxInFlight bounds the injected-but-not-completed epochs. When it is
	// reached, nothing is injected (periodic or requested) until the oldest
	// completes: piling up barriers behind a slow epoch only adds work.
	MaxInFlight int
	// CheckpointEvery makes every n-th periodic barrier a checkpoint. 1 (the
	// default) checkpoints every barrier. Requested barriers (flush, add job)
	// and the first barrier after recovery always checkpoint.
	CheckpointEvery int
}

// Defaults used for zero Config fields.
const (
	DefaultInterval        = time.Second
	DefaultMaxInFlight     = 10
	DefaultCheckpointEvery = 1
)

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.CheckpointEvery <= 0 {
		c.CheckpointEvery = DefaultCheckpointEvery
	}
	return c
}

// actorSet is a set of actor ids. Sets are printed and handed out sorted so
// that actions, and therefore test output, are deterministic.
type actorSet map[ActorID]struct{}

func newActorSet(ids ...ActorID) actorSet {
	s := make(actorSet, len(ids))
	for _, id := range ids {
		s[id] = struct{}{}
	}
	return s
}

func (s actorSet) has(id ActorID) bool { _, ok := s[id]; return ok }

func (s actorSet) sorted() []ActorID {
	out := make([]ActorID, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (s actorSet) clone() actorSet {
	out := make(actorSet, len(s))
	for id := range s {
		out[id] = struct{}{}
	}
	return out
}

func sortedCopy(ids []ActorID) []ActorID {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// formatActors prints ids as "(1,2,3)", the form the test scripts use.
func formatActors(ids []ActorID) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", id)
	}
	b.WriteByte(')')
	return b.String()
}
