package agg

import (
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Build constructs the executor for a hash_agg, simple_agg or distinct node
// over its single input. A malformed node is an error, never a panic.
func Build(env *stream.Env, _ *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	if n == nil {
		return nil, fmt.Errorf("agg: nil node")
	}
	if len(inputs) != 1 || inputs[0] == nil {
		return nil, fmt.Errorf("agg: %s takes 1 input, got %d", n.Kind, len(inputs))
	}
	switch n.Kind {
	case plan.KindHashAgg, plan.KindSimpleAgg:
		if n.Agg == nil {
			return nil, fmt.Errorf("agg: %s node without Agg", n.Kind)
		}
		if n.Kind == plan.KindSimpleAgg && len(n.Agg.GroupKeys) > 0 {
			return nil, fmt.Errorf("agg: simple_agg with group keys")
		}
		if n.Kind == plan.KindHashAgg && len(n.Agg.GroupKeys) == 0 {
			return nil, fmt.Errorf("agg: hash_agg without group keys")
		}
		a, err := NewAgg(env, inputs[0], n.Agg)
		if err != nil {
			return nil, err
		}
		return a, checkSchema(n, a.Schema())
	case plan.KindLocalAgg:
		if n.LocalAgg == nil || len(n.LocalAgg.GroupKeys) == 0 {
			return nil, fmt.Errorf("agg: local_agg node without group keys")
		}
		l, err := newLocalAgg(inputs[0], n.LocalAgg)
		if err != nil {
			return nil, err
		}
		return l, checkSchema(n, l.Schema())
	case plan.KindDistinct:
		if n.Distinct == nil {
			return nil, fmt.Errorf("agg: distinct node without Distinct")
		}
		d, err := NewDistinct(env, inputs[0], n.Distinct)
		if err != nil {
			return nil, err
		}
		return d, checkSchema(n, d.Schema())
	}
	return nil, fmt.Errorf("agg: cannot build %q", n.Kind)
}

func checkSchema(n *plan.Node, got []types.Type) error {
	if n.Schema != nil && !slices.Equal(n.Schema, got) {
		return fmt.Errorf("agg: %s node schema %v, executor produces %v", n.Kind, n.Schema, got)
	}
	return nil
}

// NewAgg returns an aggregation over input: hash aggregation when node has
// group keys, else simple aggregation (exactly one output row).
func NewAgg(env *stream.Env, input stream.Executor, node *plan.Agg) (*Agg, error) {
	in := input.Schema()
	a := &Agg{input: input, groupKeys: node.GroupKeys, simple: len(node.GroupKeys) == 0}
	if node.EmitOnWindowClose && a.simple {
		return nil, fmt.Errorf("agg: EMIT ON WINDOW CLOSE without group keys")
	}
	a.win.onClose = node.EmitOnWindowClose
	a.ectx = exprContext(env)
	a.chunkSize = env.ChunkSizeOrDefault()
	var groupTypes []types.Type
	for _, k := range node.GroupKeys {
		if k < 0 || k >= len(in) {
			return nil, fmt.Errorf("agg: group key column %d out of range [0,%d)", k, len(in))
		}
		groupTypes = append(groupTypes, in[k])
	}
	a.schema = slices.Clone(groupTypes)
	for _, call := range node.Calls {
		s, err := newCallSpec(call, in, node.AppendOnlyInput)
		if err != nil {
			return nil, fmt.Errorf("agg: %w", err)
		}
		a.calls = append(a.calls, s)
		a.schema = append(a.schema, call.Type)
	}
	if err := a.openTables(env, in, node); err != nil {
		return nil, err
	}
	out, err := newOutputEnv(a.ectx)
	if err != nil {
		return nil, err
	}
	a.out = out
	a.filterCols = make([]types.Column, len(a.calls))
	a.flush.builder = types.NewBuilder(a.schema, a.chunkSize)
	return a, nil
}

// openTables opens the result table and each table-backed call's table,
// checking their layouts.
func (a *Agg) openTables(env *stream.Env, in []types.Type, node *plan.Agg) error {
	nGroup := len(node.GroupKeys)
	result, err := openTable(env, &node.ResultTable, ResultLayout(in, node.GroupKeys, node.Calls), nGroup)
	if err != nil {
		return fmt.Errorf("agg: result table: %w", err)
	}
	a.tables = append(a.tables, result)
	for i, s := range a.calls {
		if !s.tableBacked {
			continue
		}
		want, _ := CallLayout(in, node.GroupKeys, s.AggCall)
		t, err := openTable(env, s.Table, want, nGroup)
		if err != nil {
			return fmt.Errorf("agg: call %d (%s): %w", i, s.Kind, err)
		}
		// Its rows are read by key (AddCount), so the files its fresh rows
		// seal into get bloom filters (pending.go).
		t.ReadByKey()
		cols, _ := callValueColumns(s.AggCall)
		s.vt = newValueTable(t, cols, nGroup, want)
		a.tables = append(a.tables, t)
	}
	a.groups = newGroups(result, env.CacheOrDefault(), a.schema[:nGroup], a.calls)
	return nil
}

// exprContext returns the actor's evaluation context, or a non-strict one
// of the executor's own: a stream never fails on a row error.
func exprContext(env *stream.Env) *expr.Context {
	if env != nil && env.Expr != nil {
		return env.Expr
	}
	return &expr.Context{}
}
