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
	// -1 (for identity).
	passCol []int
	// monotone[i] lists the output columns whose expression never
	// decreases as input column i grows (plan.MonotoneIn): a watermark
	// on i becomes one on each, the expression of the watermark.
	monotone [][]int
	// wms holds watermarks derived from one input watermark, not yet
	// returned.
	wms []*stream.Watermark
	// identity: the output is the input's columns in order (SELECT *),
	// so fresh rows pass unchanged (PassFresh).
	identity bool
}

func newProject(env *stream.Env, n *plan.Node, input stream.Executor) (*Project, error) {
	if n.Project == nil {
		return nil, fmt.Errorf("stateless: project node without Project")
	}
	in := input.Schema()
	p := &Project{input: input, exprCtx: exprContext(env), passCol: make([]int, len(in)), monotone: make([][]int, len(in))}
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
		if c, ok := plan.MonotoneIn(d); ok && c >= 0 && c < len(in) {
			p.monotone[c] = append(p.monotone[c], i)
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
		if len(p.wms) > 0 {
			w := p.wms[0]
			p.wms = p.wms[1:]
			return stream.Message{Watermark: w}, nil
		}
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
			if err := p.mapWatermark(msg.Watermark); err != nil {
				return stream.Message{}, err
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

// mapWatermark queues the watermarks an input watermark implies: one on
// each output column monotone in its column, valued the expression of
// the watermark (the expression of every later row is at least that).
func (p *Project) mapWatermark(w *stream.Watermark) error {
	if w.Col < 0 || w.Col >= len(p.monotone) || w.Value == nil {
		return nil
	}
	outs := p.monotone[w.Col]
	if len(outs) == 0 {
		return nil
	}
	in := p.input.Schema()
	cols := make([]types.Column, len(in))
	for i, t := range in {
		cols[i] = types.MustColumn(t, 1)
		if i == w.Col {
			cols[i].Append(w.Value)
		} else {
			cols[i].Append(nil)
		}
	}
	row := types.NewChunk(cols, nil)
	for _, o := range outs {
		col, err := p.exprs[o].Eval(p.exprCtx, row)
		if err != nil {
			return fmt.Errorf("stateless: project watermark of expression %d: %w", o, err)
		}
		if v := col.Get(0); v != nil {
			p.wms = append(p.wms, &stream.Watermark{Col: o, Value: v})
		}
	}
	return nil
}
