package sink

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Executor writes its input to a sink writer and passes every message
// on unchanged (a sink's actor has no downstream; the actor drops them).
type Executor struct {
	name string
	in   stream.Executor
	w    connector.SinkWriter
	// insertsOnly drops deletes and update pairs' old rows, and writes
	// update pairs' new rows as inserts (force_append_only).
	insertsOnly bool
	closed      bool
}

// Build constructs the sink executor of node n over its one input; g is
// unused (a sink starts no goroutines).
func Build(env *stream.Env, g *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	_ = g
	if n == nil || n.Kind != plan.KindSink || n.Sink == nil {
		return nil, fmt.Errorf("sink: cannot build node %v", n)
	}
	if len(inputs) != 1 || inputs[0] == nil {
		return nil, fmt.Errorf("sink %s: needs 1 input, got %d", n.Sink.Name, len(inputs))
	}
	s, err := connector.OpenSink(n.Sink.Spec)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", n.Sink.Name, err)
	}
	index, par := 0, 1
	if env != nil && env.Parallelism > 0 {
		index, par = env.Index, env.Parallelism
	}
	w, err := s.NewWriter(index, par)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", n.Sink.Name, err)
	}
	return New(n.Sink.Name, inputs[0], w, s.ForceAppendOnly()), nil
}

// New returns a sink executor writing in to w; insertsOnly writes only
// the inserts (force_append_only).
func New(name string, in stream.Executor, w connector.SinkWriter, insertsOnly bool) *Executor {
	return &Executor{name: name, in: in, w: w, insertsOnly: insertsOnly}
}

// Schema implements stream.Executor.
func (s *Executor) Schema() []types.Type { return s.in.Schema() }

// Next implements stream.Executor.
func (s *Executor) Next(ctx context.Context) (stream.Message, error) {
	m, err := s.in.Next(ctx)
	if err != nil {
		return m, err
	}
	switch {
	case m.Chunk != nil:
		err = s.write(ctx, m.Chunk)
	case m.Barrier != nil:
		err = s.w.Barrier(ctx, m.Barrier.Epoch, m.Barrier.Checkpoint)
	case m.Fresh != nil:
		err = fmt.Errorf("encoded rows reached a sink")
	}
	if err != nil {
		return stream.Message{}, fmt.Errorf("sink %s: %w", s.name, err)
	}
	return m, nil
}

func (s *Executor) write(ctx context.Context, c *types.Chunk) error {
	if s.insertsOnly {
		c = insertsOf(c)
	}
	if c.Cardinality() == 0 {
		return nil
	}
	return s.w.Write(ctx, c)
}

// insertsOf returns c's visible inserts (update pairs' new rows among
// them), as plain inserts.
func insertsOf(c *types.Chunk) *types.Chunk {
	if c.Ops == nil {
		return c
	}
	var vis types.Bitmap
	for i, op := range c.Ops {
		if op.IsInsert() && c.Visible(i) {
			vis.Set(i)
		}
	}
	out := &types.Chunk{Cols: c.Cols, Ops: c.Ops}
	out.SetVisibility(vis)
	out = out.Compact()
	out.Ops = nil // all inserts
	return out
}

// Release implements stream.Releaser: it closes the writer once the
// actor has stopped, however it ended.
func (s *Executor) Release() {
	if !s.closed {
		s.closed = true
		_ = s.w.Close()
	}
}
