package stream

import (
	"context"
	"errors"

	"github.com/sluice-db/sluice/internal/types"
)

// ErrScriptEnd is returned by a MockSource that has no messages left.
var ErrScriptEnd = errors.New("stream: mock source script ended")

// MockSource is an executor that replays a script of messages; operator
// tests feed executors with it. It is also handy for examples and
// benchmarks, so it is not hidden in a _test file.
type MockSource struct {
	schema []types.Type
	msgs   []Message
}

// NewMockSource returns a source that emits msgs in order.
func NewMockSource(schema []types.Type, msgs ...Message) *MockSource {
	return &MockSource{schema: schema, msgs: msgs}
}

// Push appends messages to the script.
func (m *MockSource) Push(msgs ...Message) { m.msgs = append(m.msgs, msgs...) }

// Next returns the next scripted message.
func (m *MockSource) Next(ctx context.Context) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, err
	}
	if len(m.msgs) == 0 {
		return Message{}, ErrScriptEnd
	}
	msg := m.msgs[0]
	m.msgs = m.msgs[1:]
	return msg, nil
}

// Schema returns the source's column types.
func (m *MockSource) Schema() []types.Type { return m.schema }

// TextChunk parses a chunk in text form; it panics on a malformed literal
// because it is for tests.
func TextChunk(ts []types.Type, text string) Message {
	return ChunkMsg(types.MustParseChunk(ts, text))
}

// NewBarrier returns a checkpoint barrier message for epoch.
func NewBarrier(epoch uint64) Message {
	return BarrierMsg(&Barrier{Epoch: epoch, Checkpoint: true})
}

// NewStopBarrier returns a barrier that gracefully stops the given actors.
func NewStopBarrier(epoch uint64, actors ...ActorID) Message {
	set := make(map[ActorID]bool, len(actors))
	for _, a := range actors {
		set[a] = true
	}
	return BarrierMsg(&Barrier{Epoch: epoch, Checkpoint: true, Mutation: &StopMutation{Actors: set}})
}
