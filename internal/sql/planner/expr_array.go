package planner

import (
	"math"
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Array expressions: ARRAY[...], subscripts and slices, and the quantified
// comparisons x op ANY/ALL (array).

// arrayExpr binds ARRAY[elems...]; declared is the array type a cast
// gives it (ARRAY[]::int[]) or unknown. Elements are unified as CASE
// branches are, so literals take the other elements' type.
func (b *binder) arrayExpr(a *pg_query.A_ArrayExpr, declared types.Type) (typed, error) {
	ts := make([]typed, len(a.Elements))
	for i, n := range a.Elements {
		t, err := b.bind(n)
		if err != nil {
			return typed{}, err
		}
		if t.t.IsArray() {
			return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, location(n), "multidimensional arrays are not supported")
		}
		ts[i] = t
	}
	elems := ts
	var err error
	switch {
	case declared.IsArray():
		elems, err = b.castElems(ts, a.Elements, declared.ElemType())
	case len(ts) > 0:
		elems, err = b.unify("ARRAY", ts, a.Elements)
	}
	if err != nil {
		return typed{}, err
	}
	ds := make([]expr.Desc, len(elems))
	for i, e := range elems {
		ds[i] = e.d
	}
	d := expr.Node(expr.KindArray, ds...)
	if declared.IsArray() {
		d.Type = declared
	}
	return b.check(d, a.Location)
}

// castElems applies ARRAY[...]::t[]'s cast to each element, as Postgres
// does: ARRAY[1, 2]::text[] is {1,2} of text.
func (b *binder) castElems(ts []typed, nodes []*pg_query.Node, elem types.Type) ([]typed, error) {
	out := make([]typed, len(ts))
	for i, t := range ts {
		switch {
		case t.t == elem:
			out[i] = t
		case t.t.ID == types.Unknown:
			c, err := b.coerce(t, elem, location(nodes[i]))
			if err != nil {
				return nil, err
			}
			out[i] = c
		case expr.CanCast(t.t, elem):
			out[i] = typed{d: expr.Cast(t.d, elem), t: elem}
		default:
			return nil, errAt(b.q.st, sqlerr.CannotCoerce, location(nodes[i]), "cannot cast type %s to %s", t.t, elem)
		}
	}
	return out, nil
}

// indirection binds arg[i] and arg[lo:hi] (possibly repeated: a[2:3][1]).
func (b *binder) indirection(ind *pg_query.A_Indirection) (typed, error) {
	rest := ind.Indirection
	cur, ok, err := b.carriedField(ind)
	if ok {
		rest = rest[1:]
	} else {
		cur, err = b.bind(ind.Arg)
	}
	if err != nil {
		return typed{}, err
	}
	loc := location(ind.Arg)
	for _, n := range rest {
		if f := n.GetString_(); f != nil {
			if cur, err = b.fieldOf(cur, f.Sval, loc); err != nil {
				return typed{}, err
			}
			continue
		}
		idx := n.GetAIndices()
		if idx == nil {
			return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, loc, "this indirection is not supported")
		}
		if !cur.t.IsArray() {
			return typed{}, errAt(b.q.st, sqlerr.DatatypeMismatch, loc,
				"cannot subscript type %s because it does not support subscripting", cur.t)
		}
		if cur, err = b.subscript(cur, idx, loc); err != nil {
			return typed{}, err
		}
	}
	return cur, nil
}

// carriedField reads (rel.col).field where a subquery carried a record
// column's field as the hidden column "col.field" (srf.go).
func (b *binder) carriedField(ind *pg_query.A_Indirection) (typed, bool, error) {
	cr := ind.Arg.GetColumnRef()
	f := ind.Indirection[0].GetString_()
	if cr == nil || f == nil || b.scope == nil {
		return typed{}, false, nil
	}
	qual, name, star := columnName(cr)
	if star {
		return typed{}, false, nil
	}
	i, err := b.q.resolve(b.scope, qual, name+"."+f.Sval, cr.Location)
	if err != nil {
		return typed{}, false, nil
	}
	t := b.scope.cols[i].typ
	return typed{d: expr.Input(i, t), t: t}, true, nil
}

func (b *binder) subscript(arr typed, idx *pg_query.A_Indices, loc int32) (typed, error) {
	bound := func(n *pg_query.Node, omitted int64) (typed, error) {
		if n == nil {
			return lit(strconv.FormatInt(omitted, 10), types.TInt32), nil
		}
		t, err := b.bind(n)
		if err != nil {
			return typed{}, err
		}
		if t.t.ID != types.Int32 && t.t.ID != types.Int16 && t.t.ID != types.Unknown {
			return typed{}, errAt(b.q.st, sqlerr.DatatypeMismatch, location(n), "array subscript must have type integer")
		}
		return b.coerce(t, types.TInt32, location(n))
	}
	hi, err := bound(idx.Uidx, math.MaxInt32)
	if err != nil {
		return typed{}, err
	}
	if !idx.IsSlice {
		return b.call(expr.SubscriptFunc, loc, arr, hi)
	}
	lo, err := bound(idx.Lidx, 1)
	if err != nil {
		return typed{}, err
	}
	return b.call(expr.SliceFunc, loc, arr, lo, hi)
}

// quantified binds x op ANY (array) / x op ALL (array). A parenthesized
// list on the right (x = ANY ('{1,2}')) is an unknown literal that reads
// as an array of x's type.
func (b *binder) quantified(a *pg_query.A_Expr, all bool) (typed, error) {
	name := opName(a.Name)
	if a.Rexpr.GetSubLink() != nil {
		return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, a.Location, "%s ANY/ALL (subquery) is not supported", name)
	}
	l, r, err := b.pair(a.Lexpr, a.Rexpr)
	if err != nil {
		return typed{}, err
	}
	if r.t.ID == types.Unknown && l.t.ID != types.Unknown {
		if r, err = b.coerce(r, types.ArrayOf(l.t), location(a.Rexpr)); err != nil {
			return typed{}, err
		}
	}
	if !r.t.IsArray() {
		return typed{}, errAt(b.q.st, sqlerr.DatatypeMismatch, location(a.Rexpr),
			"op ANY/ALL (array) requires array on right side")
	}
	fn := expr.AnyOp(name)
	if all {
		fn = expr.AllOp(name)
	}
	if _, err := expr.ResolveFunc(fn, []types.Type{l.t, r.t}); err != nil {
		return typed{}, errAt(b.q.st, sqlerr.UndefinedFunction, a.Location,
			"operator does not exist: %s %s %s", l.t, name, r.t.ElemType())
	}
	return b.check(expr.Func(fn, l.d, r.d), a.Location)
}

// isArrayExpr reports whether n is an ARRAY[...] constructor.
func isArrayExpr(n *pg_query.Node) (*pg_query.A_ArrayExpr, bool) {
	a := n.GetAArrayExpr()
	return a, a != nil
}
