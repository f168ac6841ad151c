package source

import (
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
)

// Build constructs the executor of a table_source node (no inputs) or a
// backfill node (one input: the upstream table's change stream). A
// malformed node is an error, never a panic.
func Build(env *stream.Env, g *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	if n == nil {
		return nil, fmt.Errorf("source: nil node")
	}
	switch n.Kind {
	case plan.KindTableSource:
		if n.TableSource == nil {
			return nil, fmt.Errorf("source: table_source node without TableSource")
		}
		if len(inputs) != 0 {
			return nil, fmt.Errorf("source: table_source takes no input, got %d", len(inputs))
		}
		return NewTableSource(env, n.TableSource, n.Schema)
	case plan.KindConnectorSource:
		if n.Connector == nil {
			return nil, fmt.Errorf("source: connector_source node without Connector")
		}
		if len(inputs) != 0 {
			return nil, fmt.Errorf("source: connector_source takes no input, got %d", len(inputs))
		}
		return NewConnectorSource(env, n.Connector, n.Schema)
	case plan.KindWatermarkFilter:
		if len(inputs) != 1 || inputs[0] == nil {
			return nil, fmt.Errorf("source: watermark_filter takes 1 input, got %d", len(inputs))
		}
		return NewWatermarkFilter(env, n, inputs[0])
	case plan.KindBackfill:
		if n.Backfill == nil {
			return nil, fmt.Errorf("source: backfill node without Backfill")
		}
		if len(inputs) != 1 || inputs[0] == nil {
			return nil, fmt.Errorf("source: backfill takes 1 input, got %d", len(inputs))
		}
		b, err := NewBackfill(env, g, n.Backfill, inputs[0])
		if err != nil {
			return nil, err
		}
		if n.Schema != nil && !slices.Equal(n.Schema, b.Schema()) {
			return nil, fmt.Errorf("source: backfill node schema %v, executor produces %v", n.Schema, b.Schema())
		}
		return b, nil
	}
	return nil, fmt.Errorf("source: cannot build %q", n.Kind)
}
