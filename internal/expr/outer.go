package expr

import (
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// outerExpr reads column i of the outer row (Context.Outer): the same
// value for every row of the chunk.
type outerExpr struct {
	i   int
	typ types.Type
}

func (e *outerExpr) Type() types.Type { return e.typ }

func (e *outerExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	if ctx == nil || e.i < 0 || e.i >= len(ctx.Outer) {
		return nil, sqlerr.Errorf(sqlerr.Internal, "expr: outer column %d read with no outer row", e.i)
	}
	d := ctx.Outer[e.i]
	if err := types.CheckDatum(d, e.typ); err != nil {
		return nil, sqlerr.Errorf(sqlerr.Internal, "expr: outer column %d: %v", e.i, err)
	}
	return constColumn(e.typ, d, c.Capacity())
}
