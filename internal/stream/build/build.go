// Package build turns a fragment's plan.Node tree into one actor's executor
// chain. It is the single place that knows every executor package; each
// package validates its own node and returns an error for a malformed one,
// and a panic in any constructor is turned into an error too, so a bad plan
// can never take the process down.
package build

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/agg"
	"github.com/sluice-db/sluice/internal/stream/join"
	"github.com/sluice-db/sluice/internal/stream/mview"
	"github.com/sluice-db/sluice/internal/stream/overtake"
	"github.com/sluice-db/sluice/internal/stream/overwindow"
	"github.com/sluice-db/sluice/internal/stream/sink"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/stream/stateless"
	"github.com/sluice-db/sluice/internal/stream/temporal"
	"github.com/sluice-db/sluice/internal/stream/topn"
	"github.com/sluice-db/sluice/internal/task"
)

// MergeInputs returns the receiving ends of the channels from the actors
// of an upstream fragment to the actor being built.
type MergeInputs func(m *plan.Merge) ([]*stream.Input, error)

// Actor builds the executor chain of one actor from its fragment's root.
// Goroutines the chain needs (input pumps of joins and unions) start in g.
func Actor(env *stream.Env, g *task.Group, root *plan.Node, merges MergeInputs) (exec stream.Executor, err error) {
	err = task.Run(context.Background(), "build", func(context.Context) error {
		var err error
		exec, err = node(env, g, root, merges, nil)
		return err
	})
	return exec, err
}

// readOnly is an executor that can skip the work of columns nobody above
// it reads (a hop window's copies, a join's output columns).
type readOnly interface{ ReadOnly(read []bool) error }

type builder func(env *stream.Env, g *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error)

func builderFor(k plan.Kind) (builder, bool) {
	switch k {
	case plan.KindProject, plan.KindFilter, plan.KindValues, plan.KindUnion, plan.KindHopWindow:
		return stateless.Build, true
	case plan.KindMaterialize:
		return mview.Build, true
	case plan.KindSink:
		return sink.Build, true
	case plan.KindHashJoin:
		return join.Build, true
	case plan.KindHashAgg, plan.KindSimpleAgg, plan.KindDistinct, plan.KindLocalAgg:
		return agg.Build, true
	case plan.KindTopN:
		return topn.Build, true
	case plan.KindOverWindow:
		return overwindow.Build, true
	case plan.KindTemporalFilter:
		return temporal.Build, true
	case plan.KindTableSource, plan.KindBackfill, plan.KindConnectorSource, plan.KindWatermarkFilter:
		return source.Build, true
	}
	return nil, false
}

// node builds n and its inputs; out marks the columns of n that its
// consumer reads (nil: all).
func node(env *stream.Env, g *task.Group, n *plan.Node, merges MergeInputs, out []bool) (stream.Executor, error) {
	if n == nil {
		return nil, fmt.Errorf("build: nil plan node")
	}
	if n.Kind == plan.KindMerge {
		m, err := merge(n, merges, out)
		if err != nil || n.Merge.GateTable == nil {
			return m, err
		}
		return gate(env, g, *n.Merge.GateTable, m)
	}
	b, ok := builderFor(n.Kind)
	if !ok {
		return nil, fmt.Errorf("build: unknown node kind %q", n.Kind)
	}
	inputs := make([]stream.Executor, len(n.Inputs))
	reads := inputReads(n, out)
	for i, in := range n.Inputs {
		e, err := node(env, g, in, merges, reads[i])
		if err != nil {
			return nil, err
		}
		inputs[i] = e
	}
	e, err := b(env, g, n, inputs)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", n.Kind, err)
	}
	if ro, ok := e.(readOnly); ok && out != nil {
		if err := ro.ReadOnly(out); err != nil {
			return nil, fmt.Errorf("build %s: %w", n.Kind, err)
		}
	}
	if env.OnExecutor != nil {
		env.OnExecutor(e)
	}
	if n.Backfill != nil && n.Backfill.GateTable != nil {
		return gate(env, g, *n.Backfill.GateTable, e)
	}
	return e, nil
}

// gate puts a gate over in, keeping its queue in table t
// (stream/overtake).
func gate(env *stream.Env, g *task.Group, t plan.Table, in stream.Executor) (stream.Executor, error) {
	if err := overtake.CheckTable(t); err != nil {
		return nil, err
	}
	st, err := env.OpenTableAllVNodes(t)
	if err != nil {
		return nil, fmt.Errorf("build gate: %w", err)
	}
	return overtake.NewGate(env, g, st, 0, in), nil
}

func merge(n *plan.Node, merges MergeInputs, out []bool) (stream.Executor, error) {
	if n.Merge == nil {
		return nil, fmt.Errorf("build: merge node without its description")
	}
	if merges == nil {
		return nil, fmt.Errorf("build: merge from fragment %d but no exchange inputs", n.Merge.UpstreamFragment)
	}
	ins, err := merges(n.Merge)
	if err != nil {
		return nil, err
	}
	m := stream.NewMerge(n.Schema, ins)
	if err := m.ReadOnly(out); err != nil {
		return nil, err
	}
	return m, nil
}
