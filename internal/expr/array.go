package expr

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// buildArray is ARRAY[args...]. The element type is declared's element
// when the planner knows it (ARRAY[]::int[]), else the args' common type,
// as Postgres resolves an ARRAY constructor.
func buildArray(args []Expr, declared types.Type) (Expr, error) {
	for _, a := range args {
		if a.Type().IsArray() {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported")
		}
	}
	var elem types.Type
	switch {
	case declared.IsArray():
		elem = declared.ElemType()
	case declared.ID != types.Unknown:
		return nil, errBuild("ARRAY declared as %s", declared)
	case len(args) == 0:
		err := sqlerr.New("42P18", "cannot determine type of empty array")
		err.Hint = "Explicitly cast to the desired type, for example ARRAY[]::integer[]."
		return nil, err
	default:
		ts := make([]types.Type, len(args))
		for i, a := range args {
			ts[i] = a.Type()
		}
		ct, ok := CommonTypeOf(ts)
		if !ok {
			return nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "ARRAY types %s cannot be matched", typeList(ts))
		}
		if elem = ct; ct.ID == types.Unknown {
			elem = types.TVarchar
		}
	}
	out := make([]Expr, len(args))
	for i, a := range args {
		var err error
		if out[i], err = coerce(a, elem); err != nil {
			return nil, err
		}
	}
	return &arrayExpr{elems: out, typ: types.ArrayOf(elem)}, nil
}

// arrayExpr builds one array per row from its element expressions.
type arrayExpr struct {
	elems []Expr
	typ   types.Type
}

func (e *arrayExpr) Type() types.Type { return e.typ }

func (e *arrayExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	n := c.Capacity()
	cols := make([]types.Column, len(e.elems))
	for j, el := range e.elems {
		col, err := el.Eval(ctx, c)
		if err != nil {
			return nil, err
		}
		if col.Len() < n {
			return nil, fmt.Errorf("expr: internal error: column has %d rows, chunk %d", col.Len(), n)
		}
		cols[j] = col
	}
	out := newVec[types.DArray](e.typ, n)
	for i := range out.Vals {
		a := make(types.DArray, len(cols))
		for j, col := range cols {
			a[j] = col.Get(i)
		}
		out.Vals[i] = a
	}
	return out, nil
}

// newArrayCast converts an array to another array type element by element
// (int[] → bigint[], text[] → date[]), with the element cast.
func newArrayCast(e Expr, to types.Type) (Expr, error) {
	from := e.Type()
	elem, err := newCast(&inputExpr{index: 0, typ: from.ElemType()}, to.ElemType())
	if err != nil {
		return nil, err
	}
	return &arrayCastExpr{arg: e, typ: to, elem: elem}, nil
}

// arrayCastExpr flattens the elements of every row into one column, casts
// that column once, and splits the result back into arrays. A failing
// element fails the statement in strict mode; otherwise the element becomes
// NULL (and is counted as a row error).
type arrayCastExpr struct {
	arg  Expr
	typ  types.Type
	elem Expr
}

func (e *arrayCastExpr) Type() types.Type { return e.typ }

func (e *arrayCastExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	in, err := evalAs[types.DArray](ctx, e.arg, c)
	if err != nil {
		return nil, err
	}
	n := c.Capacity()
	flat, err := types.NewColumn(e.arg.Type().ElemType(), n)
	if err != nil {
		return nil, err
	}
	var vis types.Bitmap
	for i := 0; i < n; i++ {
		if in.Nulls.Get(i) {
			continue
		}
		for _, d := range in.Vals[i] {
			if c.Visible(i) {
				vis.Set(flat.Len())
			}
			flat.Append(d)
		}
	}
	inner := types.NewChunk([]types.Column{flat}, nil)
	inner.SetVisibility(vis)
	res, err := e.elem.Eval(ctx, inner)
	if err != nil {
		return nil, err
	}
	out := newVec[types.DArray](e.typ, n)
	out.Nulls = in.Nulls.Clone()
	k := 0
	for i := 0; i < n; i++ {
		if in.Nulls.Get(i) {
			continue
		}
		a := make(types.DArray, len(in.Vals[i]))
		for j := range a {
			a[j] = res.Get(k)
			k++
		}
		out.Vals[i] = a
	}
	return out, nil
}
