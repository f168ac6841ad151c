package stateless

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// Project computes one output column per expression. It evaluates each
// expression over the whole input chunk and keeps the input's ops and
// visibility, so hidden rows stay hidden and update pairs stay pairs.
type Project struct {
	input   stream.Executor
	exprs   []expr.Expr
	exprCtx *expr.Context
	schema  []types.Type
	// passCol[i] is the output column that is input column i unchanged, or
	// -1: a watermark on input column i survives only through it.
	passCol []int
	// identity: the output is the input's columns in order (SELECT *),
	// so fresh rows pass unchanged (PassFresh).
	identity bool
}

func newProject(env *stream.Env, n *plan.Node, input stream.Executor) (*Project, error) {
	if n.Project == nil {
		return nil, fmt.Errorf("stateless: project node without Project")
	}
	in := input.Schema()
	p := &Project{input: input, exprCtx: exprContext(env), passCol: make([]int, len(in))}
	for i := range p.passCol {
		p.passCol[i] = -1
	}
	for i, d := range n.Project.Exprs {
		e, err := expr.Build(d, in)
		if err != nil {
			return nil, fmt.Errorf("stateless: project expression %d: %w", i, err)
		}
		p.exprs = append(p.exprs, e)
		p.schema = append(p.schema, e.Type())
		if d.Kind == expr.KindInput && p.passCol[d.Index] < 0 {
			p.passCol[d.Index] = i
		}
	}
	if err := checkSchema(n, p.schema); err != nil {
		return nil, err
	}
	p.identity = len(p.exprs) == len(in)
	for i, c := range p.passCol {
		p.identity = p.identity && c == i
	}
	return p, nil
}

// PassFresh implements stream.FreshPassing: an identity projection passes
// fresh rows unchanged when its input can hand them over.
func (p *Project) PassFresh(take func() bool) {
	if in, ok := p.input.(stream.FreshPassing); ok && p.identity {
		in.PassFresh(take)
	}
}

// Schema returns the expressions' types.
func (p *Project) Schema() []types.Type { return p.schema }

// Next projects the next chunk; barriers pass unchanged.
func (p *Project) Next(ctx context.Context) (stream.Message, error) {
	for {
		msg, err := p.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		switch {
		case msg.Chunk != nil:
			c, err := p.project(msg.Chunk)
			if err != nil {
				return stream.Message{}, err
			}
			return stream.ChunkMsg(c), nil
		case msg.Fresh != nil && !p.identity:
			return stream.Message{}, fmt.Errorf("stateless: fresh rows reached a projection that changes them")
		case msg.Watermark != nil:
			if w, ok := p.mapWatermark(msg.Watermark); ok {
				return stream.Message{Watermark: w}, nil
			}
			continue
		}
		return msg, nil
	}
}

func (p *Project) project(in *types.Chunk) (*types.Chunk, error) {
	cols := make([]types.Column, len(p.exprs))
	for i, e := range p.exprs {
		col, err := e.Eval(p.exprCtx, in)
		if err != nil {
			return nil, fmt.Errorf("stateless: project expression %d: %w", i, err)
		}
		cols[i] = col
	}
	out := in.WithColumns(cols)
	if len(cols) == 0 && in.Ops == nil {
		// A chunk without columns counts its rows by its ops: spell out
		// the inserts, or the rows would vanish.
		out.Ops = make([]types.Op, in.Capacity())
	}
	return out, nil
}

// mapWatermark renames a watermark's column to where it is passed through.
// It reports false when the column is not projected as is: an expression
// of a watermarked column need not be monotone, so the watermark is dropped.
func (p *Project) mapWatermark(w *stream.Watermark) (*stream.Watermark, bool) {
	if w.Col < 0 || w.Col >= len(p.passCol) || p.passCol[w.Col] < 0 {
		return nil, false
	}
	return &stream.Watermark{Col: p.passCol[w.Col], Value: w.Value}, true
}
