package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

func opName(names []*pg_query.Node) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1].GetString_().Sval
}

func (b *binder) aExpr(a *pg_query.A_Expr) (typed, error) {
	name := opName(a.Name)
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP, pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		if a.Lexpr == nil {
			r, err := b.bind(a.Rexpr)
			if err != nil {
				return typed{}, err
			}
			return b.call(name, a.Location, r)
		}
		l, r, err := b.pair(a.Lexpr, a.Rexpr)
		if err != nil {
			return typed{}, err
		}
		if name == "||" {
			l, r = b.textConcatArgs(l, r)
		}
		return b.call(name, a.Location, l, r)
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		k := expr.KindIsDistinctFrom
		if a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT {
			k = expr.KindIsNotDistinctFrom
		}
		return b.comparable(k, a)
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return b.comparable(expr.KindNullIf, a)
	case pg_query.A_Expr_Kind_AEXPR_IN:
		return b.in(a, name == "<>")
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		return b.between(a)
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		return b.quantified(a, a.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL)
	}
	return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, a.Location, "operator form %s is not supported", strings.TrimPrefix(a.Kind.String(), "AEXPR_"))
}

func (b *binder) pair(l, r *pg_query.Node) (typed, typed, error) {
	lt, err := b.bind(l)
	if err != nil {
		return typed{}, typed{}, err
	}
	rt, err := b.bind(r)
	return lt, rt, err
}

// comparable binds a two-argument node whose arguments are compared, after
// converting both to their common type.
func (b *binder) comparable(k expr.Kind, a *pg_query.A_Expr) (typed, error) {
	l, r, err := b.pair(a.Lexpr, a.Rexpr)
	if err != nil {
		return typed{}, err
	}
	if _, err := b.call("=", a.Location, l, r); err != nil {
		return typed{}, err
	}
	return b.check(expr.Node(k, l.d, r.d), a.Location)
}

func (b *binder) in(a *pg_query.A_Expr, not bool) (typed, error) {
	items := a.Rexpr.GetList().GetItems()
	if items == nil {
		return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, a.Location, "IN (subquery) is not supported")
	}
	nodes := append([]*pg_query.Node{a.Lexpr}, items...)
	ts := make([]typed, len(nodes))
	for i, n := range nodes {
		t, err := b.bind(n)
		if err != nil {
			return typed{}, err
		}
		ts[i] = t
	}
	u, err := b.unify("IN", ts, nodes)
	if err != nil {
		return typed{}, err
	}
	ds := make([]expr.Desc, len(u))
	for i := range u {
		ds[i] = u[i].d
	}
	k := expr.KindIn
	if not {
		k = expr.KindNotIn
	}
	return b.check(expr.Node(k, ds...), a.Location)
}

func (b *binder) between(a *pg_query.A_Expr) (typed, error) {
	bounds := a.Rexpr.GetList().GetItems()
	if len(bounds) != 2 {
		return typed{}, errAt(b.q.st, sqlerr.SyntaxError, a.Location, "BETWEEN needs two bounds")
	}
	x, err := b.bind(a.Lexpr)
	if err != nil {
		return typed{}, err
	}
	lo, hi, err := b.pair(bounds[0], bounds[1])
	if err != nil {
		return typed{}, err
	}
	if a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN {
		l, err := b.call("<", a.Location, x, lo)
		if err != nil {
			return typed{}, err
		}
		h, err := b.call(">", a.Location, x, hi)
		if err != nil {
			return typed{}, err
		}
		return boolNode(expr.KindOr, l.d, h.d), nil
	}
	l, err := b.call(">=", a.Location, x, lo)
	if err != nil {
		return typed{}, err
	}
	h, err := b.call("<=", a.Location, x, hi)
	if err != nil {
		return typed{}, err
	}
	return boolNode(expr.KindAnd, l.d, h.d), nil
}

// aggNames are the aggregate functions Sluice maintains.
var aggNames = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true, "string_agg": true, "array_agg": true,
}

func funcName(f *pg_query.FuncCall) string {
	return strings.ToLower(opName(f.Funcname))
}

func (b *binder) funcCall(f *pg_query.FuncCall) (typed, error) {
	name := funcName(f)
	if f.Over != nil {
		clause := b.clause
		switch clause {
		case "":
			clause = "this context"
		case "arguments of aggregate functions":
			return typed{}, errAt(b.q.st, sqlerr.GroupingError, f.Location, "aggregate function calls cannot contain window function calls")
		}
		return typed{}, errAt(b.q.st, sqlerr.WindowingError, f.Location, "window functions are not allowed in %s", clause)
	}
	if windowNames[name] {
		return typed{}, errAt(b.q.st, sqlerr.WrongObjectType, f.Location, "window function %s requires an OVER clause", name)
	}
	if aggNames[name] {
		clause := b.clause
		if clause == "" {
			clause = "this context"
		}
		return typed{}, errAt(b.q.st, sqlerr.GroupingError, f.Location, "aggregate functions are not allowed in %s", clause)
	}
	if f.AggStar || f.AggDistinct || f.AggFilter != nil {
		return typed{}, errAt(b.q.st, sqlerr.WrongObjectType, f.Location, "%s is not an aggregate function", name)
	}
	if srfNames[name] {
		clause := b.clause
		if clause == "" {
			clause = "this context"
		}
		return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, f.Location, "set-returning functions are not allowed in %s", clause)
	}
	args := make([]typed, len(f.Args))
	for i, a := range f.Args {
		t, err := b.bind(a)
		if err != nil {
			return typed{}, err
		}
		args[i] = t
	}
	if t, ok, err := b.userFunction(name, args, f.Location); ok || err != nil {
		return t, err
	}
	return b.call(name, f.Location, args...)
}

// textConcatArgs applies Postgres's text || anynonarray: when one side is
// text (or an untyped literal) the other is converted to text.
func (b *binder) textConcatArgs(l, r typed) (typed, typed) {
	if l.t.IsArray() || r.t.IsArray() {
		return l, r // array concatenation, append or prepend
	}
	isText := func(t typed) bool { return t.t.ID == types.Varchar || t.t.ID == types.Unknown }
	toText := func(t typed) typed {
		if t.reg != "" { // a reg* value concatenates as its name
			if named, err := b.regName(t, -1); err == nil {
				return named
			}
		}
		if isText(t) || t.t.ID == types.Bytea {
			return t
		}
		return typed{d: expr.Cast(t.d, types.TVarchar), t: types.TVarchar}
	}
	switch {
	case isText(l) && isText(r):
		return l, r
	case isText(l):
		return l, toText(r)
	case isText(r):
		return toText(l), r
	}
	return l, r
}
