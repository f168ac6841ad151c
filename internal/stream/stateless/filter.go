package stateless

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// Filter keeps the rows whose condition is TRUE. It hides the others with a
// visibility mask instead of copying columns, and never writes to the input
// chunk: a dispatcher may have handed the same columns, ops and mask to
// other outputs.
type Filter struct {
	input   stream.Executor
	cond    expr.Expr
	exprCtx *expr.Context
	// alwaysFalse is set for an untyped NULL condition (WHERE NULL).
	alwaysFalse bool
}

func newFilter(env *stream.Env, n *plan.Node, input stream.Executor) (*Filter, error) {
	if n.Filter == nil {
		return nil, fmt.Errorf("stateless: filter node without Filter")
	}
	cond, err := expr.Build(n.Filter.Cond, input.Schema())
	if err != nil {
		return nil, fmt.Errorf("stateless: filter condition: %w", err)
	}
	switch cond.Type().ID {
	case types.Bool:
	case types.Unknown:
	default:
		return nil, fmt.Errorf("stateless: filter condition is %s, not boolean", cond.Type())
	}
	if err := checkSchema(n, input.Schema()); err != nil {
		return nil, err
	}
	return &Filter{input: input, cond: cond, exprCtx: exprContext(env), alwaysFalse: cond.Type().ID == types.Unknown}, nil
}

// Schema returns the input's schema: a filter does not change columns.
func (f *Filter) Schema() []types.Type { return f.input.Schema() }

// Next returns the next chunk with at least one row passing; chunks whose
// rows are all filtered out are skipped. Barriers and watermarks pass.
func (f *Filter) Next(ctx context.Context) (stream.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return stream.Message{}, err
		}
		msg, err := f.input.Next(ctx)
		if err != nil || msg.Chunk == nil {
			return msg, err
		}
		out, err := f.filter(msg.Chunk)
		if err != nil {
			return stream.Message{}, err
		}
		if out != nil {
			return stream.ChunkMsg(out), nil
		}
	}
}

// filter returns in with the failing rows hidden, or nil when none passes.
func (f *Filter) filter(in *types.Chunk) (*types.Chunk, error) {
	n := in.Capacity()
	vis := make(types.Bitmap, (n+63)/64)
	if !f.alwaysFalse {
		col, err := f.cond.Eval(f.exprCtx, in)
		if err != nil {
			return nil, fmt.Errorf("stateless: filter condition: %w", err)
		}
		v, ok := col.(*types.Vec[bool])
		if !ok {
			return nil, fmt.Errorf("stateless: filter condition evaluated to %T", col)
		}
		passMask(vis, v, in)
	}
	if !vis.Any() {
		return nil, nil
	}
	out := in.WithColumns(in.Cols)
	// When every row passed and none was hidden before, keep "no mask":
	// downstream loops take their fast path on it.
	if vis.Count() < n || in.HasVisibility() {
		out.SetVisibility(vis)
	}
	if ops := splitBrokenPairs(in.Ops, out); ops != nil {
		out.Ops = ops
	}
	return out, nil
}

// passMask sets bit i of vis for each row that is visible in c and whose
// condition is TRUE (not FALSE, not NULL). It builds a word at a time so
// the common case is a tight loop over the bool slice.
func passMask(vis types.Bitmap, cond *types.Vec[bool], c *types.Chunk) {
	vals := cond.Vals
	for w := range vis {
		var word uint64
		base := w * 64
		end := min(base+64, len(vals))
		for i := base; i < end; i++ {
			if vals[i] {
				word |= 1 << uint(i-base)
			}
		}
		if w < len(cond.Nulls) {
			word &^= cond.Nulls[w]
		}
		if c.HasVisibility() {
			if w < len(c.Vis) {
				word &= c.Vis[w]
			} else {
				word = 0
			}
		}
		vis[w] = word
	}
}

// splitBrokenPairs keeps an update pair only when both halves are visible:
// a visible UpdateDelete must be followed directly by a visible
// UpdateInsert, and a visible UpdateInsert preceded directly by a visible
// UpdateDelete. Pairs are physically adjacent rows, so the halves of two
// different pairs are never joined across hidden rows. A half whose partner
// is hidden becomes a plain Delete or Insert. It returns a new ops slice
// when something changed, nil otherwise; ops itself is never written.
func splitBrokenPairs(ops []types.Op, c *types.Chunk) []types.Op {
	var out []types.Op
	set := func(i int, op types.Op) {
		if out == nil {
			out = append([]types.Op(nil), ops...)
		}
		out[i] = op
	}
	n := len(ops)
	for i, op := range ops {
		if !c.Visible(i) {
			continue
		}
		switch op {
		case types.UpdateDelete:
			if i+1 >= n || ops[i+1] != types.UpdateInsert || !c.Visible(i+1) {
				set(i, types.Delete)
			}
		case types.UpdateInsert:
			if i == 0 || ops[i-1] != types.UpdateDelete || !c.Visible(i-1) {
				set(i, types.Insert)
			}
		}
	}
	return out
}
