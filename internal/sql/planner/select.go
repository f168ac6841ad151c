package planner

import (
	"slices"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// ordering is a batch query's final ORDER BY / LIMIT / OFFSET, left to the
// caller instead of being planned as a top-N.
type ordering struct {
	by     []plan.ColumnOrder
	limit  int64 // -1: none
	offset int64
}

// outCol is one column a projection computes.
type outCol struct {
	t      typed
	name   string
	qual   string
	hidden bool
	// unknown marks a literal of no type (NULL, 'text') output as varchar:
	// a set operation's branch takes the other branches' type instead.
	unknown bool
}

// selectStmt plans a SELECT (or set operation, or VALUES). The result's
// visible columns come first. When top is set and the plan is a batch
// query, ORDER BY/LIMIT are returned instead of planned.
func (q *query) selectStmt(s *pg_query.SelectStmt, top bool) (*relExpr, *ordering, error) {
	if s.WithClause != nil {
		pop, err := q.pushCTEs(s.WithClause)
		if err != nil {
			return nil, nil, err
		}
		defer pop()
	}
	if s.IntoClause != nil {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "SELECT INTO is not supported")
	}
	if s.Op != pg_query.SetOperation_SETOP_NONE {
		return q.setOp(s, top)
	}
	if len(s.ValuesLists) > 0 {
		r, err := q.values(s.ValuesLists)
		if err != nil {
			return nil, nil, err
		}
		return q.finish(r, s, nil, len(r.visible()), false, top)
	}
	return q.simpleSelect(s, top)
}

// fromAndWhere plans s's FROM (a ROW_NUMBER top-N, row_number.go, or
// as usual) and returns what of WHERE is left to filter by.
func (q *query) fromAndWhere(s *pg_query.SelectStmt) (*relExpr, *pg_query.Node, error) {
	r, rest, ok, err := q.rowNumberTopN(s)
	if err != nil || !ok {
		if err != nil {
			return nil, nil, err
		}
		return q.fromClause(s.FromClause, s.WhereClause)
	}
	if len(rest) == 0 {
		return r, nil, nil
	}
	if len(rest) == 1 {
		return r, rest[0], nil
	}
	return r, &pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{Boolop: pg_query.BoolExprType_AND_EXPR, Args: rest}}}, nil
}

func (q *query) simpleSelect(s *pg_query.SelectStmt, top bool) (*relExpr, *ordering, error) {
	from, where, err := q.fromAndWhere(s)
	if err != nil {
		return nil, nil, err
	}
	if where != nil && !q.streaming {
		// A batch query filters by WHERE's plain conjuncts before any
		// subquery joins on, so a subquery run per row (an apply) runs
		// only for the rows they keep.
		var conj []*pg_query.Node
		if from, conj, err = q.plainConjunctsFirst(from, conjuncts(where)); err != nil {
			return nil, nil, err
		}
		where = andOf(conj)
	}
	if where != nil {
		if from, where, err = q.predicateSubqueries(from, where); err != nil {
			return nil, nil, err
		}
	}
	sorts := sortNodes(s)
	aggregated := len(s.GroupClause) > 0 || s.HavingClause != nil || anyAggregate(slices.Concat(s.TargetList, sorts)...)
	scalarsHere := []*pg_query.Node{where}
	if !aggregated {
		scalarsHere = slices.Concat(scalarsHere, s.TargetList, sorts)
	}
	if from, err = q.attachScalars(from, scalarSubLinks(scalarsHere...), true); err != nil {
		return nil, nil, err
	}
	if where != nil {
		b := &binder{q: q, scope: from, clause: "WHERE"}
		from, err = q.filter(b, from, where, "WHERE")
		if err != nil {
			return nil, nil, err
		}
	}
	var b *binder
	if aggregated {
		from, b, err = q.aggregate(from, s)
		if err != nil {
			return nil, nil, err
		}
	} else {
		b = &binder{q: q, scope: from}
	}
	if from, b, err = q.windows(from, b, s); err != nil {
		return nil, nil, err
	}
	if from, b, err = q.selectListSRFs(from, b, s.TargetList); err != nil {
		return nil, nil, err
	}
	outs, err := q.targets(b, s.TargetList)
	if err != nil {
		return nil, nil, err
	}
	distinct := s.DistinctClause != nil
	if distinct && s.DistinctClause[0] != nil && s.DistinctClause[0].Node != nil {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "SELECT DISTINCT ON is not supported")
	}
	nVisible := 0
	for _, o := range outs {
		if !o.hidden {
			nVisible++
		}
	}
	outs, by, err := q.orderBy(b, outs, s.SortClause, distinct)
	if err != nil {
		return nil, nil, err
	}
	r := q.project(from, outs, !distinct)
	if distinct {
		r = q.distinct(r)
	}
	return q.finish(r, s, by, nVisible, true, top)
}

// sortNodes returns the expressions of s's ORDER BY.
func sortNodes(s *pg_query.SelectStmt) []*pg_query.Node {
	out := make([]*pg_query.Node, len(s.SortClause))
	for i, sb := range s.SortClause {
		out[i] = sb.GetSortBy().Node
	}
	return out
}

// finish applies LIMIT/OFFSET (and the ORDER BY they need): as a top-N
// node, or handed back for a top-level batch query. ORDER BY without LIMIT
// in a streaming plan orders nothing and is dropped.
func (q *query) finish(r *relExpr, s *pg_query.SelectStmt, by []plan.ColumnOrder, nVisible int, ordered bool, top bool) (*relExpr, *ordering, error) {
	if !ordered && len(s.SortClause) > 0 {
		var err error
		var outs []outCol
		b := &binder{q: q, scope: r}
		for i := 0; i < nVisible; i++ {
			outs = append(outs, outCol{t: typed{d: expr.Input(i, r.cols[i].typ), t: r.cols[i].typ}, name: r.cols[i].name})
		}
		if outs, by, err = q.orderBy(b, outs, s.SortClause, false); err != nil {
			return nil, nil, err
		}
		if len(outs) > nVisible {
			r = q.project(r, outs, true)
		}
	}
	limit, offset, err := q.limits(s)
	if err != nil {
		return nil, nil, err
	}
	if s.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES {
		return q.withTies(r, by, limit, offset, top)
	}
	if top && !q.streaming {
		return r, &ordering{by: by, limit: limit, offset: offset}, nil
	}
	if limit < 0 && offset == 0 {
		return r, nil, nil
	}
	return q.topN(r, by, limit, offset), nil, nil
}

// withTies plans FETCH FIRST n ROWS WITH TIES as a top-N, also in a batch
// query, whose caller then only sorts the rows.
func (q *query) withTies(r *relExpr, by []plan.ColumnOrder, limit, offset int64, top bool) (*relExpr, *ordering, error) {
	if len(by) == 0 {
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "WITH TIES cannot be specified without ORDER BY clause")
	}
	if limit < 0 {
		// FETCH FIRST NULL ROWS: no limit, so no ties to add.
		r = q.topN(r, by, -1, offset)
	} else {
		r = q.topN(r, by, limit, offset)
		r.node.TopN.WithTies = true
	}
	if top && !q.streaming {
		return r, &ordering{by: by, limit: -1}, nil
	}
	return r, nil, nil
}

// limits evaluates LIMIT and OFFSET, which must be constant.
func (q *query) limits(s *pg_query.SelectStmt) (limit, offset int64, err error) {
	limit = -1
	if s.LimitCount != nil {
		if limit, err = q.constInt(s.LimitCount, "LIMIT", -1); err != nil {
			return 0, 0, err
		}
	}
	if s.LimitOffset != nil {
		if offset, err = q.constInt(s.LimitOffset, "OFFSET", 0); err != nil {
			return 0, 0, err
		}
	}
	return limit, offset, nil
}

// constInt evaluates a constant bigint expression; NULL gives ifNull.
func (q *query) constInt(n *pg_query.Node, what string, ifNull int64) (int64, error) {
	b := &binder{q: q, clause: what}
	t, err := b.bind(n)
	if err != nil {
		return 0, err
	}
	if t.t.ID == types.Unknown && t.d.Value == nil {
		return ifNull, nil
	}
	if !expr.CanImplicitCast(t.t, types.TInt64) {
		return 0, errAt(q.st, sqlerr.DatatypeMismatch, location(n), "argument of %s must be type bigint, not type %s", what, t.t)
	}
	if usesOuter(t.d) {
		return 0, errAt(q.st, sqlerr.FeatureNotSupported, location(n), "%s of a subquery must not refer to the query around it", what)
	}
	d, err := evalConst(t, types.TInt64)
	if err != nil {
		return 0, withPos(q.st, err, location(n))
	}
	if d == nil {
		return ifNull, nil
	}
	v := d.(int64)
	if v < 0 {
		code := sqlerr.Code("2201W")
		if what == "OFFSET" {
			code = "2201X"
		}
		return 0, errAt(q.st, code, location(n), "%s must not be negative", what)
	}
	return v, nil
}

// evalConst evaluates a constant expression strictly, as type to.
func evalConst(t typed, to types.Type) (types.Datum, error) {
	return evalConstAt(t, to, 0)
}

// evalConst evaluates a value of the statement (an INSERT's VALUES, a
// default) strictly, as type to, with now() the statement's time: the
// same for every row, as in Postgres.
func (q *query) evalConst(t typed, to types.Type) (types.Datum, error) {
	if q.now == 0 {
		q.now = types.TimestamptzFromTime(time.Now())
	}
	return evalConstAt(t, to, q.now)
}

func evalConstAt(t typed, to types.Type, now types.DTimestamptz) (types.Datum, error) {
	if expr.HasParams(t.d) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a parameter is not supported here: its value must be known when the statement is prepared")
	}
	d := t.d
	if t.t != to {
		d = expr.Cast(d, to)
	}
	e, err := expr.Build(d, nil)
	if err != nil {
		return nil, err
	}
	return expr.EvalRow(&expr.Context{Strict: true, Now: now}, e, nil, nil)
}

// targets binds the select list, expanding * and t.*.
func (q *query) targets(b *binder, list []*pg_query.Node) ([]outCol, error) {
	var outs, carried []outCol
	for _, n := range list {
		rt := n.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if qual, _, star := columnName(cr); star {
				cols, err := q.star(b, qual, cr.Location)
				if err != nil {
					return nil, err
				}
				outs = append(outs, cols...)
				continue
			}
		}
		t, err := b.bind(rt.Val)
		if err != nil {
			return nil, err
		}
		if t, err = b.regName(t, location(rt.Val)); err != nil {
			return nil, err
		}
		unknown := t.t.ID == types.Unknown
		if unknown {
			if t, err = b.coerce(t, types.TVarchar, location(rt.Val)); err != nil {
				return nil, err
			}
		}
		name := rt.Name
		if name == "" {
			name = derivedName(rt.Val)
		}
		outs = append(outs, outCol{t: t, name: name, unknown: unknown})
		for _, f := range t.fields {
			carried = append(carried, outCol{t: f.t, name: name + "." + f.name, hidden: true})
		}
	}
	return append(outs, carried...), nil
}

func (q *query) star(b *binder, qual string, loc int32) ([]outCol, error) {
	if b.schema != nil && b.grouped == nil {
		return nil, errAt(q.st, sqlerr.GroupingError, loc, "SELECT * is not allowed with GROUP BY or aggregates")
	}
	if b.scope == nil {
		return nil, errAt(q.st, sqlerr.SyntaxError, loc, "SELECT * with no tables specified is not valid")
	}
	var outs []outCol
	for _, i := range b.scope.visible() {
		c := b.scope.cols[i]
		if qual != "" && c.qual != qual {
			continue
		}
		t := typed{d: expr.Input(i, c.typ), t: c.typ}
		if b.grouped != nil {
			// Above a GROUP BY, * expands to column references, each of
			// which must be grouped, as in Postgres.
			var ok bool
			if t, ok = b.grouped(i); !ok {
				name := c.name
				if c.qual != "" {
					name = c.qual + "." + name
				}
				return nil, errAt(q.st, sqlerr.GroupingError, loc,
					"column %q must appear in the GROUP BY clause or be used in an aggregate function", name)
			}
		}
		outs = append(outs, outCol{t: t, name: c.name, qual: c.qual})
	}
	if qual != "" && len(outs) == 0 {
		return nil, errAt(q.st, sqlerr.UndefinedTable, loc, "missing FROM-clause entry for table %q", qual)
	}
	return outs, nil
}

// derivedName is the column name Postgres gives an unnamed select item.
func derivedName(n *pg_query.Node) string {
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		_, name, _ := columnName(x.ColumnRef)
		return name
	case *pg_query.Node_FuncCall:
		return funcName(x.FuncCall)
	case *pg_query.Node_TypeCast:
		if d := derivedName(x.TypeCast.Arg); d != "?column?" {
			return d
		}
		if names := x.TypeCast.TypeName.Names; len(names) > 0 {
			return names[len(names)-1].GetString_().Sval
		}
	case *pg_query.Node_CaseExpr:
		return "case"
	case *pg_query.Node_AArrayExpr:
		return "array"
	case *pg_query.Node_SubLink:
		switch x.SubLink.SubLinkType {
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			return "array"
		case pg_query.SubLinkType_EXISTS_SUBLINK:
			return "exists"
		case pg_query.SubLinkType_EXPR_SUBLINK:
			if sel := x.SubLink.Subselect.GetSelectStmt(); sel != nil && len(sel.TargetList) == 1 {
				if rt := sel.TargetList[0].GetResTarget(); rt.Name != "" {
					return rt.Name
				}
				return derivedName(sel.TargetList[0].GetResTarget().Val)
			}
		}
	case *pg_query.Node_AIndirection:
		ind := x.AIndirection.Indirection
		if f := ind[len(ind)-1].GetString_(); f != nil {
			return f.Sval // (r).x is named x
		}
		return derivedName(x.AIndirection.Arg) // tags[1] is named tags
	case *pg_query.Node_CoalesceExpr:
		return "coalesce"
	case *pg_query.Node_NullIfExpr:
		return "nullif"
	case *pg_query.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case *pg_query.Node_AExpr:
		if x.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif"
		}
	case *pg_query.Node_SqlvalueFunction:
		if name, ok := sessionValues[x.SqlvalueFunction.Op]; ok {
			return name
		}
		return "current_timestamp"
	}
	return "?column?"
}

// orderBy resolves ORDER BY items to output columns, adding hidden ones
// for expressions not in the select list.
func (q *query) orderBy(b *binder, outs []outCol, sorts []*pg_query.Node, distinct bool) ([]outCol, []plan.ColumnOrder, error) {
	var by []plan.ColumnOrder
	for _, n := range sorts {
		sb := n.GetSortBy()
		if len(sb.UseOp) > 0 {
			return nil, nil, errAt(q.st, sqlerr.FeatureNotSupported, sb.Location, "ORDER BY … USING is not supported")
		}
		col, err := q.sortColumn(b, &outs, sb.Node, distinct)
		if err != nil {
			return nil, nil, err
		}
		by = append(by, plan.ColumnOrder{Column: col, Order: sortOrder(sb)})
	}
	return outs, by, nil
}

// sortOrder is an ORDER BY item's direction and NULL placement, with
// Postgres's default: NULLs sort as larger than any value.
func sortOrder(sb *pg_query.SortBy) codec.Order {
	o := codec.Order{Desc: sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC}
	o.NullsFirst = o.Desc
	switch sb.SortbyNulls {
	case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
		o.NullsFirst = true
	case pg_query.SortByNulls_SORTBY_NULLS_LAST:
		o.NullsFirst = false
	}
	return o
}

func (q *query) sortColumn(b *binder, outs *[]outCol, n *pg_query.Node, distinct bool) (int, error) {
	visible := 0
	for _, o := range *outs {
		if !o.hidden {
			visible++
		}
	}
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok {
			if iv.Ival.Ival < 1 || int(iv.Ival.Ival) > visible {
				return 0, errAt(q.st, sqlerr.InvalidColumnReference, c.Location, "ORDER BY position %d is not in select list", iv.Ival.Ival)
			}
			return int(iv.Ival.Ival) - 1, nil
		}
	}
	if cr := n.GetColumnRef(); cr != nil {
		if qual, name, star := columnName(cr); qual == "" && !star {
			found := -1
			for i, o := range (*outs)[:visible] {
				if o.name == name {
					if found >= 0 && !descEqual(o.t.d, (*outs)[found].t.d) {
						return 0, errAt(q.st, sqlerr.AmbiguousColumn, cr.Location, "ORDER BY %q is ambiguous", name)
					}
					if found < 0 {
						found = i
					}
				}
			}
			if found >= 0 {
				return found, nil
			}
		}
	}
	t, err := b.bind(n)
	if err != nil {
		return 0, err
	}
	for i, o := range *outs {
		if descEqual(o.t.d, t.d) {
			return i, nil
		}
	}
	if distinct {
		return 0, errAt(q.st, sqlerr.InvalidColumnReference, location(n), "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
	}
	*outs = append(*outs, outCol{t: t, name: derivedName(n), hidden: true})
	return len(*outs) - 1, nil
}

// project computes outs over in. With keepKey, the input's stream key
// columns are kept (as hidden columns when outs does not already output
// them), so the result's rows stay identifiable.
func (q *query) project(in *relExpr, outs []outCol, keepKey bool) *relExpr {
	out := &relExpr{}
	var exprs []expr.Desc
	for _, o := range outs {
		exprs = append(exprs, o.t.d)
		out.cols = append(out.cols, column{qual: o.qual, name: o.name, typ: o.t.t, hidden: o.hidden, unknown: o.unknown})
	}
	var sk []int
	if keepKey {
		for _, k := range in.node.StreamKey {
			pos := slices.IndexFunc(exprs, func(d expr.Desc) bool { return d.Kind == expr.KindInput && d.Index == k })
			if pos < 0 {
				c := in.cols[k]
				exprs = append(exprs, expr.Input(k, c.typ))
				out.cols = append(out.cols, column{qual: c.qual, name: c.name, typ: c.typ, hidden: true})
				pos = len(exprs) - 1
			}
			sk = append(sk, pos)
		}
	} else {
		sk = seq(len(exprs))
	}
	out.node = &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{in.node}, Schema: colTypes(out.cols),
		StreamKey: sk, Project: &plan.Project{Exprs: exprs}}
	return out
}

func (q *query) filter(b *binder, in *relExpr, cond *pg_query.Node, what string) (*relExpr, error) {
	t, err := b.boolArg(cond, what)
	if err != nil {
		return nil, err
	}
	rest := &t.d
	var tfs []plan.TemporalFilter
	if q.streaming && what == "WHERE" && usesNow(t.d) {
		if rest, tfs, err = temporalFilters(t.d); err != nil {
			return nil, withPos(q.st, err, location(cond))
		}
	}
	n := in.node
	if rest != nil {
		n = &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{in.node}, Schema: in.node.Schema,
			StreamKey: in.node.StreamKey, Filter: &plan.Filter{Cond: *rest}}
	}
	return &relExpr{node: temporalNodes(n, tfs), cols: in.cols}, nil
}

// distinct removes duplicate rows over all of r's columns.
func (q *query) distinct(r *relExpr) *relExpr {
	keys := seq(len(r.cols))
	n := &plan.Node{Kind: plan.KindDistinct, Inputs: []*plan.Node{r.node}, Schema: r.node.Schema, StreamKey: keys,
		Distinct: &plan.Distinct{Keys: keys, Table: distinctTable(r.node.Schema, keys)}}
	return &relExpr{node: n, cols: r.cols}
}

func colTypes(cols []column) []types.Type {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.typ
	}
	return ts
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
