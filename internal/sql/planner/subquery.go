package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Subqueries in expressions are planned as joins, in batch and streaming
// plans alike:
//
//   - x IN (SELECT y …) in a WHERE conjunct: an inner join with the
//     distinct y (a semi-join: each row once, however many y match).
//   - x NOT IN (SELECT y …): a left join with the distinct y, and the
//     subquery's row count and NULL count joined on as one row, so the
//     row is kept as Postgres keeps it: when the subquery is empty, or
//     when x is not NULL, no y is NULL and none matched.
//   - EXISTS (SELECT … WHERE inner = outer AND …): the correlated
//     equalities' inner sides become the subquery's columns, and the
//     rest of it a semi-join on them; NOT EXISTS a left join keeping the
//     rows that matched nothing. Without correlation, the subquery's row
//     count joined on as one row decides.
//   - A scalar subquery anywhere in an expression: an aggregate without
//     GROUP BY (always one row), planned once and joined on as a column.
//     In a batch plan any other query too, as its row count and one of
//     its values (subquery_scalar.go).
//
// Correlated scalar subqueries other than those subquery_correlated.go
// decorrelates, and correlations other than equalities, are refused
// (0A000).

// scalarSub is a scalar subquery of the statement: its type and, once
// joined onto the relation its expression is bound over, its column.
type scalarSub struct {
	t        types.Type
	col      int
	attached bool
	// count, when counted, is the column holding the subquery's row
	// count, which must be at most one (KindSingleRow).
	count   int
	counted bool
	// errCol, when not zero, is the column with the error an apply's run
	// for the row met (apply.go), raised where the value is read.
	errCol int
}

// value is the bound expression reading an attached subquery's value.
func (sc *scalarSub) value() expr.Desc {
	if !sc.counted && sc.errCol == 0 {
		return expr.Input(sc.col, sc.t)
	}
	count := expr.Literal(int64(1), types.TInt64)
	if sc.counted {
		count = expr.Input(sc.count, types.TInt64)
	}
	d := expr.Node(expr.KindSingleRow, count, expr.Input(sc.col, sc.t))
	if sc.errCol != 0 {
		d.Args = append(d.Args, expr.Input(sc.errCol, types.TVarchar))
	}
	d.Type = sc.t
	return d
}

// bindSubLink binds a subquery in an expression: a scalar one planned by
// attachScalars; before that (an aggregation's first pass collecting
// calls) a NULL of its type stands in.
func (b *binder) bindSubLink(s *pg_query.SubLink) (typed, error) {
	if sc, ok := b.q.scalars[s]; ok {
		if !sc.attached {
			return typed{d: expr.Null(sc.t), t: sc.t}, nil
		}
		return typed{d: sc.value(), t: sc.t}, nil
	}
	return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, s.Location,
		"this subquery is not supported here: IN, NOT IN, EXISTS and NOT EXISTS must be WHERE conditions joined by AND, "+
			"and a scalar subquery must be an aggregate without GROUP BY")
}

// scalarSubLinks collects the scalar subqueries in ns, not looking inside
// subqueries.
func scalarSubLinks(ns ...*pg_query.Node) []*pg_query.SubLink {
	var out []*pg_query.SubLink
	for _, n := range ns {
		walkNodes(n, func(x any) bool {
			s, ok := x.(*pg_query.SubLink)
			if ok && (s.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK || s.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK ||
				s.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK) {
				out = append(out, s)
			}
			return !ok
		})
	}
	return out
}

// attachScalars plans each scalar subquery in subs and joins it onto r as
// a hidden column, which binding the subquery then reads. With
// correlatedOK (r is a FROM clause's relation, not an aggregation's
// output) a subquery referring to r's columns is decorrelated too.
func (q *query) attachScalars(r *relExpr, subs []*pg_query.SubLink, correlatedOK bool) (*relExpr, error) {
	defer q.hideOuter()()
	for _, s := range subs {
		next, sc, err := q.attachScalar(r, s, correlatedOK)
		if err != nil {
			return nil, err
		}
		r = next
		q.scalarMap()[s] = sc
	}
	return r, nil
}

// attachScalar plans one subquery of attachScalars: a scalar one planned
// alone and joined on, decorrelated, or (in a batch query, and for ARRAY
// and EXISTS in expressions always) as an apply.
func (q *query) attachScalar(r *relExpr, s *pg_query.SubLink, correlatedOK bool) (*relExpr, *scalarSub, error) {
	if s.SubLinkType != pg_query.SubLinkType_EXPR_SUBLINK {
		return q.applySubLink(r, s)
	}
	// Planned again each time: a CTE referenced twice plans its query,
	// and so its subqueries, once per reference.
	sr, err := q.scalarPlan(s)
	if err != nil && correlatedOK && sqlerr.CodeOf(err) == sqlerr.FeatureNotSupported {
		joined, sc, cerr := q.correlatedScalar(r, s, err)
		if cerr == nil || q.streaming || sqlerr.CodeOf(cerr) != sqlerr.FeatureNotSupported {
			return joined, sc, cerr
		}
		return q.applySubLink(r, s)
	}
	if err != nil {
		return nil, nil, err
	}
	one := lit("1", types.TInt32)
	joined, at := q.hashJoinAt(r, hideAll(sr.r), plan.InnerJoin, []equiKey{{l: one, r: one}}, nil)
	return joined, sr.attachedAt(at), nil
}

func (q *query) scalarMap() map[*pg_query.SubLink]*scalarSub {
	if q.scalars == nil {
		q.scalars = map[*pg_query.SubLink]*scalarSub{}
	}
	return q.scalars
}

// preplanScalars records the types of the scalar subqueries in ns, so an
// aggregation's first binding pass can stand NULLs in for them.
func (q *query) preplanScalars(from *relExpr, ns ...*pg_query.Node) error {
	defer q.hideOuter()()
	for _, s := range scalarSubLinks(ns...) {
		if _, ok := q.scalars[s]; ok {
			continue
		}
		t, err := q.preplanType(from, s)
		if err != nil {
			return err
		}
		q.scalarMap()[s] = &scalarSub{t: t}
	}
	return nil
}

// preplanType is the type of subquery s's value: an ARRAY's is planned
// as its apply will be, over from.
func (q *query) preplanType(from *relExpr, s *pg_query.SubLink) (types.Type, error) {
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		return types.TBool, nil
	case pg_query.SubLinkType_ARRAY_SUBLINK:
		_, _, t, err := q.applyPlan(from, s.Subselect.GetSelectStmt(), plan.ApplyArray, s.Location)
		return types.ArrayOf(t), err
	}
	sr, err := q.scalarPlan(s)
	return sr.t, err
}

// correlated rewords a subquery's unknown column as what it likely is.
func correlated(err error, s *pg_query.SubLink) error {
	if sqlerr.CodeOf(err) == sqlerr.UndefinedColumn || sqlerr.CodeOf(err) == sqlerr.UndefinedTable {
		e := sqlerr.Errorf(sqlerr.FeatureNotSupported, "%v (correlated scalar subqueries are not supported)", err)
		return e
	}
	return err
}

func hideAll(r *relExpr) *relExpr {
	out := &relExpr{node: r.node, cols: slices.Clone(r.cols)}
	for i := range out.cols {
		out.cols[i].hidden = true
	}
	return out
}

// predicateSubqueries plans the WHERE conjuncts that are IN, NOT IN,
// EXISTS or NOT EXISTS subqueries as joins onto from, and returns the
// other conjuncts.
func (q *query) predicateSubqueries(from *relExpr, where *pg_query.Node) (*relExpr, *pg_query.Node, error) {
	conj := conjuncts(where)
	defer q.hideOuter()()
	var rest []*pg_query.Node
	for _, c := range conj {
		s, negated := predicateSubLink(c)
		if s == nil {
			rest = append(rest, c)
			continue
		}
		var joined *relExpr
		var err error
		switch s.SubLinkType {
		case pg_query.SubLinkType_ANY_SUBLINK:
			joined, err = q.inSubquery(from, s, negated)
		default:
			joined, err = q.existsSubquery(from, s, negated)
		}
		if err != nil && !q.streaming && sqlerr.CodeOf(err) == sqlerr.FeatureNotSupported {
			if applied, aerr := q.applyPredicate(from, s, negated); aerr == nil {
				joined, err = applied, nil
			}
		}
		if err != nil {
			return nil, nil, err
		}
		from = joined
	}
	return from, andOf(rest), nil
}

// plainConjunctsFirst filters from by the conjuncts that hold no
// subquery and returns the others.
func (q *query) plainConjunctsFirst(from *relExpr, conj []*pg_query.Node) (*relExpr, []*pg_query.Node, error) {
	var plain, rest []*pg_query.Node
	for _, c := range conj {
		if hasSubLink(c) {
			rest = append(rest, c)
		} else {
			plain = append(plain, c)
		}
	}
	if len(plain) == 0 {
		return from, conj, nil
	}
	r, err := q.filter(&binder{q: q, scope: from, clause: "WHERE"}, from, andOf(plain), "WHERE")
	return r, rest, err
}

// hasSubLink reports whether n holds a subquery.
func hasSubLink(n *pg_query.Node) bool {
	found := false
	walkNodes(n, func(x any) bool {
		if _, ok := x.(*pg_query.SubLink); ok {
			found = true
		}
		return !found
	})
	return found
}

// predicateSubLink returns c's IN or EXISTS subquery, under one NOT or
// none.
func predicateSubLink(c *pg_query.Node) (*pg_query.SubLink, bool) {
	negated := false
	if be := c.GetBoolExpr(); be != nil && be.Boolop == pg_query.BoolExprType_NOT_EXPR && len(be.Args) == 1 {
		c, negated = be.Args[0], true
	}
	s := c.GetSubLink()
	if s == nil || (s.SubLinkType != pg_query.SubLinkType_ANY_SUBLINK && s.SubLinkType != pg_query.SubLinkType_EXISTS_SUBLINK) {
		return nil, false
	}
	if s.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK && !isEqualsOp(s.OperName) {
		return nil, false
	}
	return s, negated
}

func isEqualsOp(names []*pg_query.Node) bool {
	return len(names) == 0 || (len(names) == 1 && names[0].GetString_().GetSval() == "=")
}

// inSubquery plans x IN (sub) or x NOT IN (sub).
func (q *query) inSubquery(from *relExpr, s *pg_query.SubLink, negated bool) (*relExpr, error) {
	sub, _, err := q.selectStmt(s.Subselect.GetSelectStmt(), false)
	if err != nil {
		return nil, correlated(err, s)
	}
	tests := []*pg_query.Node{s.Testexpr}
	if row := s.Testexpr.GetRowExpr(); row != nil {
		tests = row.Args
	}
	vis := sub.visible()
	if len(vis) != len(tests) {
		return nil, errAt(q.st, sqlerr.SyntaxError, s.Location, "subquery has too %s columns",
			map[bool]string{true: "many", false: "few"}[len(vis) > len(tests)])
	}
	if negated && len(tests) > 1 {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, s.Location, "NOT IN with a row of several columns is not supported")
	}
	b := &binder{q: q, scope: from, clause: "WHERE"}
	var outer []typed
	for _, t := range tests {
		x, err := b.bind(t)
		if err != nil {
			return nil, err
		}
		outer = append(outer, x)
	}
	if !negated {
		return q.semiJoin(from, sub, outer, vis)
	}
	return q.notIn(from, sub, outer[0], vis[0], s)
}

// semiJoin joins from with the distinct values of sub's columns cols,
// outer[i] = cols[i]: each row of from once if any matches.
func (q *query) semiJoin(from, sub *relExpr, outer []typed, cols []int) (*relExpr, error) {
	d, keys, err := q.distinctKeys(sub, outer, cols)
	if err != nil {
		return nil, err
	}
	return q.hashJoin(from, d, plan.InnerJoin, keys, nil), nil
}

// distinctKeys projects sub onto cols, distinct, and pairs each outer
// expression with its column, in a common type.
func (q *query) distinctKeys(sub *relExpr, outer []typed, cols []int) (*relExpr, []equiKey, error) {
	var outs []outCol
	for _, c := range cols {
		outs = append(outs, outCol{t: typed{d: expr.Input(c, sub.cols[c].typ), t: sub.cols[c].typ}, name: "_sub", hidden: true})
	}
	d := hideAll(q.distinct(q.project(sub, outs, false)))
	b := &binder{q: q, clause: "WHERE"}
	keys := make([]equiKey, len(outer))
	for i, x := range outer {
		y := typed{d: expr.Input(i, d.cols[i].typ), t: d.cols[i].typ}
		ct, ok := expr.CommonType(x.t, y.t)
		if !ok {
			return nil, nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "operator does not exist: %s = %s", x.t, y.t)
		}
		x, _ = b.coerce(x, ct, -1)
		y, _ = b.coerce(y, ct, -1)
		keys[i] = equiKey{l: x, r: y}
	}
	return d, keys, nil
}

// notIn keeps the rows of from for which x NOT IN (sub) is true: the
// subquery is empty, or x is not NULL, the subquery has no NULL and none
// of its values equals x.
func (q *query) notIn(from, sub *relExpr, x typed, col int, s *pg_query.SubLink) (*relExpr, error) {
	d, keys, err := q.distinctKeys(sub, []typed{x}, []int{col})
	if err != nil {
		return nil, err
	}
	joined, matched := q.hashJoinAt(from, d, plan.LeftJoin, keys, nil)
	stats, err := q.subqueryCounts(s, true)
	if err != nil {
		return nil, err
	}
	one := lit("1", types.TInt32)
	all, n := q.hashJoinAt(joined, hideAll(stats), plan.InnerJoin, []equiKey{{l: one, r: one}}, nil)
	nulls := n + 1
	cond := orOf(isZero(n), andOf3(
		expr.Node(expr.KindIsNotNull, x.d), isZero(nulls),
		expr.Node(expr.KindIsNull, expr.Input(matched, joined.cols[matched].typ))))
	return q.filterDesc(all, cond), nil
}

// subqueryCounts plans SELECT count(*)[, count(*) - count(c)] FROM (s)
// AS _sub(c): the subquery's rows and, with nulls, its NULLs.
func (q *query) subqueryCounts(s *pg_query.SubLink, nulls bool) (*relExpr, error) {
	sel := proto.Clone(s.Subselect.GetSelectStmt()).(*pg_query.SelectStmt)
	star := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
		Funcname: []*pg_query.Node{strNode("count")}, AggStar: true, Location: -1}}}
	targets := []*pg_query.Node{resTarget(star)}
	from := &pg_query.RangeSubselect{Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}},
		Alias: &pg_query.Alias{Aliasname: "_sub"}}
	if nulls {
		from.Alias.Colnames = []*pg_query.Node{strNode("_c")}
		col := &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: &pg_query.ColumnRef{
			Fields: []*pg_query.Node{strNode("_sub"), strNode("_c")}, Location: -1}}}
		count := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
			Funcname: []*pg_query.Node{strNode("count")}, Args: []*pg_query.Node{col}, Location: -1}}}
		diff := &pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: &pg_query.A_Expr{Kind: pg_query.A_Expr_Kind_AEXPR_OP,
			Name: []*pg_query.Node{strNode("-")}, Lexpr: star, Rexpr: count, Location: -1}}}
		targets = append(targets, resTarget(diff))
	}
	counts := &pg_query.SelectStmt{TargetList: targets, Op: pg_query.SetOperation_SETOP_NONE,
		LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
		FromClause:  []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: from}}}}
	r, _, err := q.selectStmt(counts, false)
	if err != nil {
		return nil, correlated(err, s)
	}
	return r, nil
}

// existsSubquery plans [NOT] EXISTS (sub).
func (q *query) existsSubquery(from *relExpr, s *pg_query.SubLink, negated bool) (*relExpr, error) {
	sel := s.Subselect.GetSelectStmt()
	inner, outer, rest, err := q.correlation(from, sel, s)
	if err != nil {
		return nil, err
	}
	if len(inner) == 0 {
		stats, err := q.subqueryCounts(s, false)
		if err != nil {
			return nil, err
		}
		one := lit("1", types.TInt32)
		all, n := q.hashJoinAt(from, hideAll(stats), plan.InnerJoin, []equiKey{{l: one, r: one}}, nil)
		cond := isZero(n)
		if !negated {
			cond = expr.Node(expr.KindNot, cond)
		}
		return q.filterDesc(all, cond), nil
	}
	decor := proto.Clone(sel).(*pg_query.SelectStmt)
	decor.WhereClause = andOf(rest)
	decor.TargetList = nil
	for _, n := range inner {
		decor.TargetList = append(decor.TargetList, resTarget(n))
	}
	sub, _, err := q.selectStmt(decor, false)
	if err != nil {
		return nil, correlated(err, s)
	}
	cols := sub.visible()
	if !negated {
		return q.semiJoin(from, sub, outer, cols)
	}
	d, keys, err := q.distinctKeys(sub, outer, cols)
	if err != nil {
		return nil, err
	}
	joined, first := q.hashJoinAt(from, d, plan.LeftJoin, keys, nil)
	return q.filterDesc(joined, expr.Node(expr.KindIsNull, expr.Input(first, joined.cols[first].typ))), nil
}

// correlation splits an EXISTS subquery's WHERE: equalities between an
// expression of its own FROM and one of the outer query's (inner, outer),
// and the conjuncts of its own (rest). Any other reference to the outer
// query is refused, and so is correlation in a subquery that groups.
func (q *query) correlation(from *relExpr, sel *pg_query.SelectStmt, s *pg_query.SubLink) (inner []*pg_query.Node, outer []typed, rest []*pg_query.Node, err error) {
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.FromClause) == 0 {
		return nil, nil, conjuncts(selWhere(sel)), nil
	}
	scope, _, err := q.fromClause(sel.FromClause, nil)
	if err != nil {
		return nil, nil, nil, correlated(err, s)
	}
	ob := &binder{q: q, scope: from, clause: "WHERE"}
	for _, c := range conjuncts(sel.WhereClause) {
		if q.bindsIn(c, scope) {
			rest = append(rest, c)
			continue
		}
		l, r, ok := equality(c)
		if ok && q.bindsIn(r, scope) && !q.bindsIn(l, scope) {
			l, r = r, l
		}
		// The outer side must use outer columns only: a name the
		// subquery's own FROM also has would bind to the wrong one.
		if !ok || !q.bindsIn(l, scope) || q.bindsIn(r, scope) || q.mentionsColumnOf(r, scope) {
			return nil, nil, nil, errAt(q.st, sqlerr.FeatureNotSupported, location(c),
				"a subquery may refer to the outer query only in equalities joined by AND (inner = outer)")
		}
		o, err := ob.bind(r)
		if err != nil {
			return nil, nil, nil, err
		}
		inner, outer = append(inner, l), append(outer, o)
	}
	if len(inner) > 0 && s.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK && (len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || sel.LimitCount != nil || sel.LimitOffset != nil || anyAggregate(sel.TargetList...)) {
		return nil, nil, nil, errAt(q.st, sqlerr.FeatureNotSupported, s.Location,
			"a correlated EXISTS subquery with GROUP BY, aggregates, LIMIT or OFFSET is not supported")
	}
	return inner, outer, rest, nil
}

// mentionsColumnOf reports whether a column reference in n binds in r.
func (q *query) mentionsColumnOf(n *pg_query.Node, r *relExpr) bool {
	found := false
	walkNodes(n, func(x any) bool {
		switch x := x.(type) {
		case *pg_query.ColumnRef:
			if q.bindsIn(&pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: x}}, r) {
				found = true
			}
			return false
		case *pg_query.SubLink:
			return false
		}
		return !found
	})
	return found
}

func selWhere(sel *pg_query.SelectStmt) *pg_query.Node {
	if sel == nil {
		return nil
	}
	return sel.WhereClause
}

// equality returns l and r of l = r.
func equality(c *pg_query.Node) (*pg_query.Node, *pg_query.Node, bool) {
	a := c.GetAExpr()
	if a == nil || a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || !isEqualsOp(a.Name) || len(a.Name) == 0 {
		return nil, nil, false
	}
	return a.Lexpr, a.Rexpr, true
}

// filterDesc filters r by a bound condition.
func (q *query) filterDesc(r *relExpr, cond expr.Desc) *relExpr {
	n := &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{r.node}, Schema: r.node.Schema,
		StreamKey: r.node.StreamKey, Filter: &plan.Filter{Cond: cond}}
	return &relExpr{node: n, cols: r.cols}
}

func isZero(col int) expr.Desc {
	d := expr.Func("=", expr.Input(col, types.TInt64), expr.Literal(int64(0), types.TInt64))
	d.Type = types.TBool
	return d
}

func orOf(a, b expr.Desc) expr.Desc { return expr.Node(expr.KindOr, a, b) }

func andOf3(a, b, c expr.Desc) expr.Desc { return expr.Node(expr.KindAnd, a, b, c) }

func strNode(s string) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_String_{String_: &pg_query.String{Sval: s}}}
}

func resTarget(v *pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Val: v, Location: -1}}}
}
