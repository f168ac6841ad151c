package overwindow

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/window"
)

// Build constructs the executor of an over_window node over its input.
// It starts no goroutines.
func Build(env *stream.Env, _ *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	if n == nil || n.Kind != plan.KindOverWindow || n.OverWindow == nil {
		return nil, errors.New("overwindow: not an over_window node")
	}
	if len(inputs) != 1 || inputs[0] == nil {
		return nil, fmt.Errorf("overwindow: %d inputs, want 1", len(inputs))
	}
	if env == nil || env.Store == nil {
		return nil, errors.New("overwindow: no state store in env")
	}
	st, err := env.OpenTable(n.OverWindow.Table)
	if err != nil {
		return nil, fmt.Errorf("overwindow: open state table: %w", err)
	}
	ectx := env.Expr
	if ectx == nil {
		ectx = &expr.Context{} // non-strict: a row error is NULL
	}
	return newExecutor(n, inputs[0], st, ectx, configFor(env))
}

func configFor(env *stream.Env) config {
	return config{
		chunkSize:  env.ChunkSizeOrDefault(),
		partitions: max(16, env.CacheOrDefault()/64),
		rows:       env.CacheOrDefault(),
	}
}

func newExecutor(n *plan.Node, input stream.Executor, table stateTable, ectx *expr.Context, cfg config) (*Executor, error) {
	w := n.OverWindow
	in := input.Schema()
	var inputKey []int
	if len(n.Inputs) == 1 && n.Inputs[0] != nil {
		inputKey = n.Inputs[0].StreamKey
	}
	lay, err := newLayout(in, w, inputKey)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(in)
	for _, c := range w.Calls {
		for _, a := range c.Args {
			if a < 0 || a >= len(in) {
				return nil, fmt.Errorf("overwindow: argument column %d out of range", a)
			}
		}
		out = append(out, c.Type)
	}
	if n.Schema != nil && !slices.Equal(n.Schema, out) {
		return nil, fmt.Errorf("overwindow: node schema %v, want %v", n.Schema, out)
	}
	ev, err := window.New(w.Calls, ectx)
	if err != nil {
		return nil, err
	}
	back, fwd, whole := window.Reach(w.Calls)
	return &Executor{input: input, table: table, lay: lay, ev: ev, schema: out, back: back, fwd: fwd, whole: whole,
		cfg: cfg, cache: storage.NewLRU[string, *partition](cfg.partitions),
		chunker: stream.NewChangeChunker(out, cfg.chunkSize)}, nil
}

var _ stream.Executor = (*Executor)(nil)
