package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// In a batch query, a correlated subquery that does not decorrelate into
// a join (its conditions on the outer query are not equalities, it is
// ARRAY(SELECT …), or EXISTS sits inside an expression) is planned as an
// apply (plan.KindApply): its plan reads the outer row's columns as
// expr.KindOuter and runs once per outer row, as Postgres runs a
// SubPlan. While such a subquery is planned, q.outer is the relation of
// the query around it: a column its own FROM does not have is looked up
// there. Only the nearest enclosing query is seen; a subquery reaching
// two levels out is refused. A streaming job keeps the joins only.

// outerColumn resolves a column the binder's scope lacks against the
// enclosing query of an apply subquery; ok is false when there is none
// or it lacks the column too.
func (b *binder) outerColumn(qual, name string, loc int32) (typed, bool) {
	o := b.q.outer
	if o == nil || b.scope == o {
		return typed{}, false
	}
	i, err := b.q.resolve(o, qual, name, loc)
	if err != nil {
		return typed{}, false
	}
	t := o.cols[i].typ
	return typed{d: expr.Outer(i, t), t: t}, true
}

// fartherColumn reports whether a query further out than the nearest
// enclosing one has the column.
func (b *binder) fartherColumn(qual, name string, loc int32) bool {
	for _, r := range b.q.farther {
		if r != b.scope {
			if _, err := b.q.resolve(r, qual, name, loc); err == nil {
				return true
			}
		}
	}
	return false
}

// applyPlan plans sel for each row of from: the subquery's first visible
// column, in its ORDER BY order, under from. It returns the apply node's
// relation (from's columns, then mode's hidden result columns) and the
// position of the first result column.
func (q *query) applyPlan(from *relExpr, sel *pg_query.SelectStmt, mode plan.ApplyMode, loc int32) (*relExpr, int, types.Type, error) {
	return q.applyPlanMatch(from, sel, mode, loc, nil)
}

// applyPlanMatch is applyPlan keeping, with match, only the subquery's
// rows whose value equals match (bound over from): x IN (SELECT …).
func (q *query) applyPlanMatch(from *relExpr, sel *pg_query.SelectStmt, mode plan.ApplyMode, loc int32, match *typed) (*relExpr, int, types.Type, error) {
	if q.streaming {
		return nil, 0, types.Type{}, errAt(q.st, sqlerr.FeatureNotSupported, loc, "this subquery is not supported in a streaming job")
	}
	if sel == nil {
		return nil, 0, types.Type{}, errAt(q.st, sqlerr.FeatureNotSupported, loc, "this subquery is not supported")
	}
	if mode == plan.ApplyExists && match == nil {
		sel = existsTargets(sel) // IN compares its select list's value
	}
	saved := q.outer
	q.outer = from
	sub, ord, err := q.selectStmt(sel, true)
	q.outer = saved
	if err != nil {
		return nil, 0, types.Type{}, err
	}
	vis := sub.visible()
	if mode != plan.ApplyExists && len(vis) != 1 {
		return nil, 0, types.Type{}, errAt(q.st, sqlerr.SyntaxError, loc, "subquery must return only one column")
	}
	if ord != nil && (len(ord.by) > 0 || ord.limit >= 0 || ord.offset > 0) {
		sub = q.topN(sub, ord.by, ord.limit, ord.offset)
	}
	if match != nil {
		if len(vis) != 1 {
			return nil, 0, types.Type{}, errAt(q.st, sqlerr.SyntaxError, loc, "subquery has too many columns")
		}
		if sub, err = q.matchOuter(sub, vis[0], *match, loc); err != nil {
			return nil, 0, types.Type{}, err
		}
	}
	// EXISTS reads no column (its select list may have none, or fail).
	value := typed{d: expr.Literal(true, types.TBool), t: types.TBool}
	if mode != plan.ApplyExists {
		value = typed{d: expr.Input(vis[0], sub.cols[vis[0]].typ), t: sub.cols[vis[0]].typ}
	}
	t := value.t
	inner := q.project(sub, []outCol{{t: value, name: "value"}}, false)
	results := map[plan.ApplyMode][]column{
		plan.ApplyScalar: {{name: "_count", typ: types.TInt64, hidden: true}, {name: "_value", typ: t, hidden: true}},
		plan.ApplyExists: {{name: "_exists", typ: types.TBool, hidden: true}},
		plan.ApplyArray:  {{name: "_array", typ: types.ArrayOf(t), hidden: true}},
	}[mode]
	results = append(results, column{name: "_error", typ: types.TVarchar, hidden: true})
	if mode == plan.ApplyArray && t.IsArray() {
		return nil, 0, types.Type{}, errAt(q.st, sqlerr.FeatureNotSupported, loc, "ARRAY() of a subquery returning arrays is not supported")
	}
	out := &relExpr{cols: append(append([]column(nil), from.cols...), results...)}
	out.node = &plan.Node{Kind: plan.KindApply, Inputs: []*plan.Node{from.node, inner.node}, Schema: colTypes(out.cols),
		StreamKey: from.node.StreamKey, Apply: &plan.Apply{Mode: mode}}
	return out, len(from.cols), t, nil
}

// applySubLink attaches sublink s (a scalar, ARRAY or EXISTS subquery in
// an expression) to from as an apply.
func (q *query) applySubLink(from *relExpr, s *pg_query.SubLink) (*relExpr, *scalarSub, error) {
	sel := s.Subselect.GetSelectStmt()
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXPR_SUBLINK:
		r, at, t, err := q.applyPlan(from, sel, plan.ApplyScalar, s.Location)
		if err != nil {
			return nil, nil, err
		}
		return r, &scalarSub{t: t, col: at + 1, count: at, counted: true, attached: true, errCol: at + 2}, nil
	case pg_query.SubLinkType_ARRAY_SUBLINK:
		r, at, t, err := q.applyPlan(from, sel, plan.ApplyArray, s.Location)
		if err != nil {
			return nil, nil, err
		}
		return r, &scalarSub{t: types.ArrayOf(t), col: at, attached: true, errCol: at + 1}, nil
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		r, at, _, err := q.applyPlan(from, sel, plan.ApplyExists, s.Location)
		if err != nil {
			return nil, nil, err
		}
		return r, &scalarSub{t: types.TBool, col: at, attached: true, errCol: at + 1}, nil
	}
	return nil, nil, errAt(q.st, sqlerr.FeatureNotSupported, s.Location, "this subquery is not supported here")
}

// existsTargets replaces the select list of EXISTS's subquery by a
// constant, as Postgres never evaluates it (EXISTS (SELECT 1/0 …) is
// true when there is a row), unless the list decides how many rows
// there are: aggregates, DISTINCT, set operations, GROUP BY.
func existsTargets(sel *pg_query.SelectStmt) *pg_query.SelectStmt {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.DistinctClause) > 0 || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || anyAggregate(sel.TargetList...) || len(sel.ValuesLists) > 0 || len(sel.SortClause) > 0 {
		return sel
	}
	out := proto.Clone(sel).(*pg_query.SelectStmt)
	one := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
		Val: &pg_query.A_Const_Ival{Ival: &pg_query.Integer{Ival: 1}}, Location: -1}}}
	out.TargetList = []*pg_query.Node{resTarget(one)}
	return out
}

// matchOuter filters sub to the rows whose column col equals match, an
// expression of the outer row.
func (q *query) matchOuter(sub *relExpr, col int, match typed, loc int32) (*relExpr, error) {
	l := typed{d: expr.Input(col, sub.cols[col].typ), t: sub.cols[col].typ}
	r := typed{d: inputsAsOuter(match.d), t: match.t}
	b := &binder{q: q, scope: sub, clause: "WHERE"}
	ct, ok := expr.CommonType(l.t, r.t)
	if !ok {
		return nil, errAt(q.st, sqlerr.UndefinedFunction, loc, "operator does not exist: %s = %s", r.t, l.t)
	}
	var err error
	if l, err = b.coerce(l, ct, loc); err != nil {
		return nil, err
	}
	if r, err = b.coerce(r, ct, loc); err != nil {
		return nil, err
	}
	eq, err := b.check(expr.Func("=", l.d, r.d), loc)
	if err != nil {
		return nil, err
	}
	return q.filterDesc(sub, eq.d), nil
}

// applyPredicate plans a WHERE conjunct [NOT] EXISTS (sub), or x IN
// (sub), as an apply and a filter on its result.
func (q *query) applyPredicate(from *relExpr, s *pg_query.SubLink, negated bool) (*relExpr, error) {
	sel := s.Subselect.GetSelectStmt()
	var match *typed
	if s.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK {
		if negated {
			return nil, errAt(q.st, sqlerr.FeatureNotSupported, s.Location,
				"NOT IN of a subquery may refer to the outer query only in equalities joined by AND (inner = outer)")
		}
		x, err := (&binder{q: q, scope: from, clause: "WHERE"}).bind(s.Testexpr)
		if err != nil {
			return nil, err
		}
		match = &x
	}
	r, at, _, err := q.applyPlanMatch(from, sel, plan.ApplyExists, s.Location, match)
	if err != nil {
		return nil, err
	}
	cond := (&scalarSub{t: types.TBool, col: at, attached: true, errCol: at + 1}).value()
	if negated {
		cond = expr.Node(expr.KindNot, cond)
	}
	return q.filterDesc(r, cond), nil
}

// inputsAsOuter rewrites references to the input's columns as references
// to the outer row's: an expression of the outer query (x of x IN …,
// bound where no enclosing query is visible, so it has no outer
// references of its own) evaluated inside the subquery.
func inputsAsOuter(d expr.Desc) expr.Desc {
	if d.Kind == expr.KindInput {
		d.Kind = expr.KindOuter
		return d
	}
	if len(d.Args) > 0 {
		args := make([]expr.Desc, len(d.Args))
		for i, a := range d.Args {
			args[i] = inputsAsOuter(a)
		}
		d.Args = args
	}
	return d
}

// usesOuter reports whether d reads the enclosing query's row.
func usesOuter(d expr.Desc) bool {
	return expr.Any(d, func(x expr.Desc) bool { return x.Kind == expr.KindOuter })
}
