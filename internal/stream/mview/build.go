package mview

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Build constructs the executor for a materialize node over its one input.
// g is unused (materialize starts no goroutines); it is taken so every
// executor package has the same Build signature.
func Build(env *stream.Env, g *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	_ = g
	if n == nil || n.Kind != plan.KindMaterialize || n.Materialize == nil {
		return nil, fmt.Errorf("mview: cannot build node %v", describe(n))
	}
	if env == nil || env.Store == nil {
		return nil, fmt.Errorf("mview: no state store in the environment")
	}
	if len(inputs) != 1 || inputs[0] == nil {
		return nil, fmt.Errorf("mview: materialize needs 1 input, got %d", len(inputs))
	}
	t := n.Materialize.Table
	if err := sameTypes(t.Types, inputs[0].Schema()); err != nil {
		return nil, fmt.Errorf("mview: table %d: %w", t.ID, err)
	}
	table, err := openTable(env, t)
	if err != nil {
		return nil, err
	}
	m := newMaterialize(inputs[0], table, t, env.ChunkSizeOrDefault(), env.CacheOrDefault())
	m.fresh = n.Materialize.FreshInserts
	// A table keyed by its hidden row id is changed only by statements
	// that read it under its lock: their update pairs are of its rows.
	m.overwrites = m.fresh
	m.downstream = env.Downstream
	if in, ok := inputs[0].(stream.FreshPassing); ok {
		// A table's Merge from its source, or a view's input over its
		// upstream table (SELECT *), may hand over fresh rows as they
		// are; applyFreshRows takes them whatever the table holds.
		in.PassFresh(func() bool { return true })
	}
	if n.Materialize.View || n.Materialize.CheckedWrites {
		// A view's input inserts only keys the view does not hold, and so
		// do a table's checked writers. Another table's materialize keeps
		// reading: its writers may overwrite.
		m.check = consistency{table: t.ID, report: env.OnInconsistentOp}
		m.trusted = !env.CheckInserts
	}
	if n.Materialize.CheckedWrites {
		table.ReadByKey()
		m.overwrites = m.trusted
	}
	return m, nil
}

func describe(n *plan.Node) string {
	if n == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", n.Kind)
}

func sameTypes(table, input []types.Type) error {
	if len(table) != len(input) {
		return fmt.Errorf("table has %d columns, input %d", len(table), len(input))
	}
	for i := range table {
		if table[i] != input[i] {
			return fmt.Errorf("column %d is %s in the table, %s in the input", i, table[i], input[i])
		}
	}
	return nil
}

// openTable opens the view's table for the vnodes the actor owns.
func openTable(env *stream.Env, t plan.Table) (*storage.StateTable, error) {
	st, err := env.OpenTable(t)
	if err != nil {
		return nil, fmt.Errorf("mview: open table %d: %w", t.ID, err)
	}
	return st, nil
}
