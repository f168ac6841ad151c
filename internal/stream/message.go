package stream

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// Message is what flows between executors and actors: exactly one of Chunk,
// Barrier or Watermark is set.
type Message struct {
	Chunk     *types.Chunk
	Barrier   *Barrier
	Watermark *Watermark
	// Fresh is a table source's bulk inserts, still encoded, for the
	// table's materialize only (fresh.go).
	Fresh *FreshRows
}

// ChunkMsg wraps a chunk.
func ChunkMsg(c *types.Chunk) Message { return Message{Chunk: c} }

// BarrierMsg wraps a barrier.
func BarrierMsg(b *Barrier) Message { return Message{Barrier: b} }

func (m Message) String() string {
	switch {
	case m.Chunk != nil:
		return "chunk:\n" + m.Chunk.String()
	case m.Barrier != nil:
		return m.Barrier.String()
	case m.Watermark != nil:
		return fmt.Sprintf("watermark col=%d %v", m.Watermark.Col, m.Watermark.Value)
	case m.Fresh != nil:
		return fmt.Sprintf("fresh rows: %d", m.Fresh.Len())
	}
	return "empty message"
}

// Barrier closes an epoch: every row an executor saw before the barrier
// belongs to Epoch, and an executor seals its state for Epoch when the
// barrier passes. Barriers are immutable once injected; they are shared by
// pointer between the outputs of a dispatcher.
type Barrier struct {
	Epoch uint64
	// Checkpoint barriers commit state; others only align.
	Checkpoint bool
	// Mutation changes what data means for the actors it names (adding a
	// job, stopping actors gracefully). Commands that only change whether
	// or how fast an actor runs travel on the control channel instead.
	Mutation Mutation
	// DMLHorizon is, per table, the last DML log seq enqueued when the
	// barrier was injected. A table source emits a record of a
	// transaction across tables (storage.DMLRecord.Gated) only before the
	// first barrier whose horizon covers it. nil (a barrier of a test)
	// gates nothing.
	DMLHorizon map[uint32]uint64
	// Time is when the barrier was injected: now() for the epoch it
	// closes (temporal filters). Zero in barriers of tests.
	Time types.DTimestamptz
}

func (b *Barrier) String() string {
	s := fmt.Sprintf("barrier %d", b.Epoch)
	if b.Mutation != nil {
		s += " " + b.Mutation.String()
	}
	return s
}

// IsStop reports whether the barrier stops actor id.
func (b *Barrier) IsStop(id ActorID) bool {
	s, ok := b.Mutation.(*StopMutation)
	return ok && s.Actors[id]
}

// Mutation is a barrier-carried change.
type Mutation interface {
	isMutation()
	String() string
}

// ActorID identifies an actor in the whole deployment.
type ActorID = uint32

// StopMutation is the graceful, barrier-carried stop: the named actors
// finish the epoch, pass the barrier on, and exit. Immediate DROP does not
// use it; it goes over the control channel.
type StopMutation struct {
	Actors map[ActorID]bool
}

func (*StopMutation) isMutation() {}
func (s *StopMutation) String() string {
	return fmt.Sprintf("stop(%d actors)", len(s.Actors))
}

// AddMutation marks the first barrier of a new job: from this barrier on,
// the named upstream actors send to new outputs.
type AddMutation struct {
	JobID uint32
	// Dispatchers maps an upstream actor to the dispatchers it adds before
	// passing this barrier on, so the new job's first message is this
	// barrier.
	Dispatchers map[ActorID][]Dispatcher
}

func (*AddMutation) isMutation() {}
func (a *AddMutation) String() string {
	return fmt.Sprintf("add(job %d)", a.JobID)
}

// Watermark says no future row will have column Col below Value.
type Watermark struct {
	Col   int
	Value types.Datum
}
