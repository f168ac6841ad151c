package temporal

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
)

// Build constructs the executor of a temporal_filter node.
func Build(env *stream.Env, _ *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	if n == nil || n.Kind != plan.KindTemporalFilter {
		return nil, fmt.Errorf("temporal: cannot build %v", n)
	}
	if len(inputs) != 1 || inputs[0] == nil {
		return nil, fmt.Errorf("temporal: temporal_filter takes 1 input, got %d", len(inputs))
	}
	return NewFilter(env, n, inputs[0])
}
