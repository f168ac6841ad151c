package stateless

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Union is UNION ALL over N inputs of one schema. Chunks pass through as
// they arrive; barriers are aligned, so each is returned once, after every
// input's data of its epoch.
type Union struct {
	g      *task.Group
	stats  *stream.ActorStats // the actor's, for its input waits (nil in tests)
	inputs []stream.Executor
	schema []types.Type
	// al is started on the first Next, because its pumps need a context
	// and a context is never stored at construction.
	al *stream.Aligned
	wm *stream.WatermarkMin
}

func newUnion(g *task.Group, n *plan.Node, inputs []stream.Executor) (*Union, error) {
	if g == nil {
		return nil, fmt.Errorf("stateless: union needs a task group")
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("stateless: union needs at least one input")
	}
	schema := inputs[0].Schema()
	for i, in := range inputs {
		if in == nil {
			return nil, fmt.Errorf("stateless: union input %d is nil", i)
		}
		if err := sameSchema(schema, in.Schema()); err != nil {
			return nil, fmt.Errorf("stateless: union input %d: %w", i, err)
		}
	}
	if err := checkSchema(n, schema); err != nil {
		return nil, err
	}
	return &Union{g: g, inputs: inputs, schema: schema, wm: stream.NewWatermarkMin(len(inputs))}, nil
}

func sameSchema(want, got []types.Type) error {
	if len(want) != len(got) {
		return fmt.Errorf("has %d columns, input 0 has %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Errorf("column %d is %s, input 0 has %s", i, got[i], want[i])
		}
	}
	return nil
}

// Schema returns the common schema of the inputs.
func (u *Union) Schema() []types.Type { return u.schema }

// Next returns the next chunk from any input or the next aligned barrier.
func (u *Union) Next(ctx context.Context) (stream.Message, error) {
	if u.al == nil {
		u.al = stream.NewAligned(ctx, u.g, u.inputs, u.stats)
	}
	for {
		i, msg, err := u.al.Next(ctx)
		if err != nil {
			return stream.Message{}, fmt.Errorf("stateless: union: %w", err)
		}
		if msg.Watermark != nil {
			if w, ok := u.wm.Observe(i, msg.Watermark); ok {
				return stream.Message{Watermark: w}, nil
			}
			continue
		}
		return msg, nil
	}
}
