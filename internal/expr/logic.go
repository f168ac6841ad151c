package expr

import (
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// asBool coerces a condition argument to boolean (an untyped 'true' is
// accepted, an integer is not — Postgres's 42804).
func asBool(what string, e Expr) (Expr, error) {
	switch e.Type().ID {
	case types.Bool:
		return e, nil
	case types.Unknown:
		return newCast(e, types.TBool)
	}
	return nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", what, e.Type())
}

func buildAndOr(k Kind, args []Expr) (Expr, error) {
	if len(args) < 1 {
		return nil, errBuild("%s needs at least one argument", k)
	}
	for i, a := range args {
		var err error
		if args[i], err = asBool(strings.ToUpper(string(k)), a); err != nil {
			return nil, err
		}
	}
	return &andOrExpr{or: k == KindOr, args: args}, nil
}

// andOrExpr is three-valued AND / OR over two or more arguments: for AND,
// any FALSE wins, else any NULL makes NULL, else TRUE (OR is the dual).
// Each argument is evaluated, left to right, only over the rows the earlier
// ones left undecided (the others are invisible to it, so their errors do
// not count), as Postgres's executor short-circuits per row: the common
// guard x <> 0 AND 10 / x > 1 must not divide by zero. SQL promises no
// order; this one is Postgres's in practice.
type andOrExpr struct {
	or   bool
	args []Expr
}

func (e *andOrExpr) Type() types.Type { return types.TBool }

func (e *andOrExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	n := c.Capacity()
	out := newVec[bool](types.TBool, n)
	// decided marks rows whose value is the dominant one (FALSE for AND).
	dominant := e.or
	for i := range out.Vals {
		out.Vals[i] = !dominant
	}
	undecided := visibleMask(c)
	for _, a := range e.args {
		if !undecided.Any() {
			break
		}
		v, err := evalAs[bool](ctx, a, restrict(c, undecided))
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			if !undecided.Get(i) {
				continue
			}
			switch {
			case v.Nulls.Get(i):
				out.Nulls.Set(i)
			case v.Vals[i] == dominant:
				out.Vals[i] = dominant
				out.Nulls.Clear(i)
				undecided.Clear(i)
			}
		}
	}
	zeroNulls(out)
	return out, nil
}

func buildTest(k Kind, args []Expr) (Expr, error) {
	if len(args) != 1 {
		return nil, errBuild("%s takes 1 argument, got %d", k, len(args))
	}
	a := args[0]
	if k != KindIsNull && k != KindIsNotNull {
		var err error
		if a, err = asBool(strings.ToUpper(strings.ReplaceAll(string(k), "_", " ")), a); err != nil {
			return nil, err
		}
	}
	return &testExpr{kind: k, arg: a}, nil
}

// testExpr is NOT and the IS [NOT] NULL / TRUE / FALSE predicates.
type testExpr struct {
	kind Kind
	arg  Expr
}

func (e *testExpr) Type() types.Type { return types.TBool }

func (e *testExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	col, err := e.arg.Eval(ctx, c)
	if err != nil {
		return nil, err
	}
	n := c.Capacity()
	out := newVec[bool](types.TBool, n)
	var bv *types.Vec[bool]
	if e.kind != KindIsNull && e.kind != KindIsNotNull {
		if bv, err = asVec[bool](col, n); err != nil {
			return nil, err
		}
	}
	for i := 0; i < n; i++ {
		null := col.IsNull(i)
		switch e.kind {
		case KindIsNull:
			out.Vals[i] = null
		case KindIsNotNull:
			out.Vals[i] = !null
		case KindIsTrue, KindIsNotTrue:
			out.Vals[i] = (!null && bv.Vals[i]) == (e.kind == KindIsTrue)
		case KindIsFalse, KindIsNotFalse:
			out.Vals[i] = (!null && !bv.Vals[i]) == (e.kind == KindIsFalse)
		case KindNot:
			if null {
				out.Nulls.Set(i)
				continue
			}
			out.Vals[i] = !bv.Vals[i]
		}
	}
	return out, nil
}

// unify casts args to their common type (text when all are untyped).
func unify(what string, args []Expr) ([]Expr, types.Type, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	ct, ok := CommonTypeOf(ts)
	if !ok {
		return nil, types.Type{}, sqlerr.Errorf(sqlerr.DatatypeMismatch, "%s types %s cannot be matched", what, typeList(ts))
	}
	if ct.ID == types.Unknown {
		ct = types.TVarchar
	}
	out := make([]Expr, len(args))
	for i, a := range args {
		var err error
		if out[i], err = coerce(a, ct); err != nil {
			return nil, types.Type{}, err
		}
	}
	return out, ct, nil
}

func typeList(ts []types.Type) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, " and ")
}

func buildDistinct(not bool, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errBuild("IS DISTINCT FROM takes 2 arguments, got %d", len(args))
	}
	args, _, err := unify("IS DISTINCT FROM", args)
	if err != nil {
		return nil, err
	}
	return &naryExpr{args: args, typ: types.TBool, fn: func(_ *Context, ds []types.Datum) (types.Datum, error) {
		a, b := ds[0], ds[1]
		var distinct bool
		switch {
		case a == nil || b == nil:
			distinct = (a == nil) != (b == nil)
		default:
			distinct = types.Compare(a, b) != 0
		}
		return distinct != not, nil
	}}, nil
}
