package topn

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Build constructs the executor for a top_n node over its single input.
// The group is unused: top-N starts no goroutines.
func Build(env *stream.Env, _ *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	if n == nil || n.Kind != plan.KindTopN {
		return nil, errors.New("topn: not a top_n node")
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("topn: %d inputs, want 1", len(inputs))
	}
	lay, sp, err := validate(n, inputs[0].Schema())
	if err != nil {
		return nil, err
	}
	if env == nil || env.Store == nil {
		return nil, errors.New("topn: no state store in env")
	}
	table, err := openStateTable(env, n.TopN.Table)
	if err != nil {
		return nil, err
	}
	return newExecutor(inputs[0], table, lay, sp, configFor(env, sp)), nil
}

// validate checks the node against its input schema and derives the
// executor's layout and ranking.
func validate(n *plan.Node, schema []types.Type) (*layout, spec, error) {
	t := n.TopN
	if t == nil {
		return nil, spec{}, errors.New("topn: top_n node without TopN")
	}
	out := schema
	if t.Rank {
		out = append(slices.Clip(schema), types.TInt64)
		if t.WithTies || t.Limit < 0 {
			return nil, spec{}, errors.New("topn: a rank column needs a limit and no ties")
		}
	}
	if n.Schema != nil && !slices.Equal(n.Schema, out) {
		return nil, spec{}, fmt.Errorf("topn: node schema %v differs from input schema %v", n.Schema, schema)
	}
	if t.Offset < 0 {
		return nil, spec{}, fmt.Errorf("topn: negative offset %d", t.Offset)
	}
	if t.WithTies && t.Limit < 0 {
		return nil, spec{}, errors.New("topn: WITH TIES needs a limit")
	}
	for _, o := range t.OrderBy {
		if o.Column < 0 || o.Column >= len(schema) {
			return nil, spec{}, fmt.Errorf("topn: ORDER BY column %d out of range", o.Column)
		}
	}
	for _, g := range t.GroupKeys {
		if g < 0 || g >= len(schema) {
			return nil, spec{}, fmt.Errorf("topn: group key %d out of range", g)
		}
	}
	// A group's rows must live in one vnode for a prefix scan to return
	// them in rank order.
	for _, k := range t.Table.DistKey {
		if !slices.Contains(t.GroupKeys, k) {
			return nil, spec{}, fmt.Errorf("topn: distribution key column %d is not a group key", k)
		}
	}
	lay, err := newLayout(schema, t)
	if err != nil {
		return nil, spec{}, err
	}
	// Every stream-key column of the input must be in the PK, or two rows
	// the stream tells apart would share one state row.
	if len(n.Inputs) == 1 && n.Inputs[0] != nil {
		for _, k := range n.Inputs[0].StreamKey {
			if !slices.Contains(t.Table.PK, k) {
				return nil, spec{}, fmt.Errorf("topn: input stream key column %d is not in the state table PK %v", k, t.Table.PK)
			}
		}
	}
	sp := newSpec(t.Offset, t.Limit, t.WithTies)
	sp.rank = t.Rank
	sp.appendOnly = t.AppendOnlyInput && sp.limit > 0
	return lay, sp, nil
}

// configFor sizes the caches from the Env: each group keeps its window plus
// up to `high` rows beyond it, and the number of cached groups is chosen so
// that about CacheEntries rows are cached in all.
func configFor(env *stream.Env, sp spec) config {
	entries := env.CacheOrDefault()
	window := sp.offset + 1
	if sp.limit >= 0 {
		window = sp.end()
	}
	high := min(entries, max(sp.limit, 16))
	return config{
		chunkSize: env.ChunkSizeOrDefault(),
		groups:    max(1, entries/max(1, window+high)),
		high:      high,
	}
}
