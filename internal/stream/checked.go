package stream

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// CheckedExecutor wraps an executor and asserts the stream's invariants:
// the first message is a barrier, barrier epochs strictly increase, and
// every chunk has the executor's schema. A violation is a bug in the
// wrapped executor; it is returned as an error so the actor fails and the
// job recovers instead of computing garbage.
type CheckedExecutor struct {
	inner     Executor
	name      string
	lastEpoch uint64
	seen      bool
}

// Checked wraps e. name appears in error messages.
func Checked(name string, e Executor) *CheckedExecutor {
	return &CheckedExecutor{inner: e, name: name}
}

// Next passes the next message on after checking it.
func (c *CheckedExecutor) Next(ctx context.Context) (Message, error) {
	msg, err := c.inner.Next(ctx)
	if err != nil {
		return msg, err
	}
	if err := c.check(msg); err != nil {
		return Message{}, err
	}
	return msg, nil
}

func (c *CheckedExecutor) check(msg Message) error {
	switch {
	case msg.Barrier != nil:
		if c.seen && msg.Barrier.Epoch <= c.lastEpoch {
			return fmt.Errorf("stream: %s: barrier epoch %d after %d", c.name, msg.Barrier.Epoch, c.lastEpoch)
		}
		c.seen, c.lastEpoch = true, msg.Barrier.Epoch
	case !c.seen:
		return fmt.Errorf("stream: %s: first message is not a barrier: %s", c.name, msg)
	case msg.Chunk != nil:
		return checkSchema(c.name, msg.Chunk, c.inner.Schema())
	}
	return nil
}

func checkSchema(name string, ch *types.Chunk, schema []types.Type) error {
	if len(ch.Cols) != len(schema) {
		return fmt.Errorf("stream: %s: chunk has %d columns, schema %d", name, len(ch.Cols), len(schema))
	}
	for i, col := range ch.Cols {
		if col.Type() != schema[i] && !(schema[i].ID == types.Unknown) {
			return fmt.Errorf("stream: %s: column %d is %s, schema says %s", name, i, col.Type(), schema[i])
		}
	}
	return nil
}

// Schema returns the wrapped executor's schema.
func (c *CheckedExecutor) Schema() []types.Type { return c.inner.Schema() }
