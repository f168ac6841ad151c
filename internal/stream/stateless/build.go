package stateless

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Build constructs the executor for a project, filter, values or union node.
// g is only used by union, which starts one pump per input in it on its
// first Next call.
func Build(env *stream.Env, g *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	if n == nil {
		return nil, fmt.Errorf("stateless: nil node")
	}
	switch n.Kind {
	case plan.KindProject:
		in, err := singleInput(n, inputs)
		if err != nil {
			return nil, err
		}
		return newProject(env, n, in)
	case plan.KindFilter:
		in, err := singleInput(n, inputs)
		if err != nil {
			return nil, err
		}
		return newFilter(env, n, in)
	case plan.KindValues:
		if len(inputs) != 0 {
			return nil, fmt.Errorf("stateless: values takes no inputs, got %d", len(inputs))
		}
		return newValues(env, n)
	case plan.KindUnion:
		u, err := newUnion(g, n, inputs)
		if err != nil {
			return nil, err
		}
		if env != nil {
			u.stats = env.Stats
		}
		return u, nil
	case plan.KindHopWindow:
		in, err := singleInput(n, inputs)
		if err != nil {
			return nil, err
		}
		return newHopWindow(n, in)
	}
	return nil, fmt.Errorf("stateless: cannot build a %q node", n.Kind)
}

func singleInput(n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	if len(inputs) != 1 || inputs[0] == nil {
		return nil, fmt.Errorf("stateless: %s needs 1 input, got %d", n.Kind, len(inputs))
	}
	return inputs[0], nil
}

// exprContext returns the actor's evaluation context, or a fresh non-strict
// one: a nil context would make expressions strict, and a streaming job
// must never fail on a row error.
func exprContext(env *stream.Env) *expr.Context {
	if env != nil && env.Expr != nil {
		return env.Expr
	}
	return &expr.Context{}
}

// checkSchema verifies that a node's declared schema, when given, matches
// what the executor produces. An Unknown column (an untyped NULL) in either
// is accepted, as stream.Checked does.
func checkSchema(n *plan.Node, got []types.Type) error {
	if n.Schema == nil {
		return nil
	}
	if len(n.Schema) != len(got) {
		return fmt.Errorf("stateless: %s node declares %d columns, produces %d", n.Kind, len(n.Schema), len(got))
	}
	for i, t := range n.Schema {
		if t != got[i] && t.ID != types.Unknown && got[i].ID != types.Unknown {
			return fmt.Errorf("stateless: %s node column %d declared %s, produces %s", n.Kind, i, t, got[i])
		}
	}
	return nil
}
