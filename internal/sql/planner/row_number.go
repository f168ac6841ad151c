package planner

import (
	"slices"
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// The group top-N as SQL writes it:
//
//	SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY p ORDER BY o) AS rn FROM …) t
//	WHERE rn <= N [AND …]
//
// is planned as the subquery without rn under a top-N per partition
// (plan.TopN with GroupKeys), then the rest of the outer query. The row
// number is computed by the top-N (plan.TopN.Rank) only when the outer
// query reads it. Other uses of ROW_NUMBER are window functions
// (window.go), computed for every row.

// rowNumberTopN plans s's FROM and WHERE when they have that shape; ok is
// false when they do not (the caller plans them as usual).
func (q *query) rowNumberTopN(s *pg_query.SelectStmt) (r *relExpr, rest []*pg_query.Node, ok bool, err error) {
	if len(s.FromClause) != 1 {
		return nil, nil, false, nil
	}
	sub := s.FromClause[0].GetRangeSubselect()
	if sub == nil || sub.Lateral || sub.Subquery.GetSelectStmt() == nil {
		return nil, nil, false, nil
	}
	inner := sub.Subquery.GetSelectStmt()
	at, rn, over := rowNumberTarget(inner)
	if at < 0 {
		return nil, nil, false, nil
	}
	limit, rest, found := rowNumberLimit(conjuncts(s.WhereClause), rn)
	// Otherwise the row number is an ordinary window function (window.go):
	// unfiltered, filtered twice, beside DISTINCT or a LIMIT of its
	// query (which it is computed before), or keeping no row.
	if !found || mentions(rest, rn) || len(inner.DistinctClause) > 0 || limit <= 0 ||
		inner.LimitCount != nil || inner.LimitOffset != nil || len(over.OrderClause) == 0 || over.Refname != "" {
		return nil, nil, false, nil
	}
	ranked := refersTo(s, rn)
	// The subquery with its row number replaced by a constant (so column
	// aliases and ordinals still point where they did), selecting the
	// window's PARTITION BY and ORDER BY expressions too (last, under
	// names of their own), so they mean what they meant in it.
	stripped := proto.Clone(sub).(*pg_query.RangeSubselect)
	body := stripped.Subquery.GetSelectStmt()
	body.TargetList[at].GetResTarget().Val = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
		Val: &pg_query.A_Const_Ival{Ival: &pg_query.Integer{Ival: rowNumberStandIn}}}}}
	exprs := slices.Clone(over.PartitionClause)
	for _, n := range over.OrderClause {
		exprs = append(exprs, n.GetSortBy().Node)
	}
	for i, e := range exprs {
		body.TargetList = append(body.TargetList, &pg_query.Node{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{
			Name: windowColumn(i), Val: e, Location: location(e)}}})
	}
	if r, err = q.subselect(stripped); err != nil {
		return nil, nil, false, err
	}
	// The window's columns are the planner's, not the query's: SELECT *
	// must not show them.
	vis := r.visible()
	for _, i := range vis[len(vis)-len(exprs):] {
		r.cols[i].hidden = true
	}
	groups, by, err := q.overColumns(r, over)
	if err != nil {
		return nil, nil, false, err
	}
	top := q.groupTopN(r, groups, by, limit)
	if ranked {
		col, ok := standInColumn(r)
		if !ok {
			return nil, nil, false, nil // planned as a window function instead
		}
		top = q.withRank(top, col)
	}
	return top, rest, true, nil
}

// rowNumberStandIn is the constant standing in for the row number in the
// planned subquery, odd enough to be found again among its columns (a *
// before it makes its position unknowable from the select list).
const rowNumberStandIn = -1_907_202_611

// standInColumn finds the stand-in's column in the planned subquery.
func standInColumn(r *relExpr) (int, bool) {
	n := r.node
	for n.Kind == plan.KindTopN || n.Kind == plan.KindFilter {
		n = n.Inputs[0]
	}
	if n.Kind != plan.KindProject || len(n.Project.Exprs) != len(r.cols) {
		return 0, false
	}
	want := strconv.Itoa(rowNumberStandIn)
	for _, i := range r.visible() {
		d := n.Project.Exprs[i]
		if d.Kind == expr.KindLiteral && d.Value != nil && *d.Value == want {
			return i, true
		}
	}
	return 0, false
}

// withRank makes a top-N output each row's rank, in place of the
// constant standing in for the row number at column col.
func (q *query) withRank(top *relExpr, col int) *relExpr {
	n := top.node
	n.TopN.Rank = true
	n.Schema = append(slices.Clip(n.Schema), types.TInt64)
	rank := len(top.cols)
	cols := append(slices.Clip(top.cols), column{name: "_rank", typ: types.TInt64, hidden: true})
	var outs []outCol
	for i, c := range top.cols {
		t := typed{d: expr.Input(i, c.typ), t: c.typ}
		if i == col {
			t = typed{d: expr.Input(rank, types.TInt64), t: types.TInt64}
		}
		outs = append(outs, outCol{t: t, name: c.name, qual: c.qual, hidden: c.hidden})
	}
	return q.project(&relExpr{node: n, cols: cols}, outs, true)
}

// rowNumberTarget finds the ROW_NUMBER() OVER (…) column of a subquery:
// its position (-1: none), name and window.
func rowNumberTarget(s *pg_query.SelectStmt) (int, string, *pg_query.WindowDef) {
	if s.Op != pg_query.SetOperation_SETOP_NONE {
		return -1, "", nil
	}
	for i, t := range s.TargetList {
		rt := t.GetResTarget()
		fc := rt.GetVal().GetFuncCall()
		if fc == nil || fc.Over == nil || funcName(fc) != "row_number" || len(fc.Args) > 0 || fc.AggFilter != nil {
			continue
		}
		name := rt.Name
		if name == "" {
			name = "row_number"
		}
		return i, name, fc.Over
	}
	return -1, "", nil
}

// rowNumberLimit finds the conjunct bounding rn (rn <= N, rn < N, rn = 1,
// or the same reversed) and returns N and the other conjuncts.
func rowNumberLimit(conj []*pg_query.Node, rn string) (int64, []*pg_query.Node, bool) {
	for i, c := range conj {
		e := c.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
			continue
		}
		op := e.Name[0].GetString_().GetSval()
		col, val := e.Lexpr, e.Rexpr
		if !isColumn(col, rn) {
			col, val = val, col
			op = map[string]string{"<=": ">=", ">=": "<=", "<": ">", ">": "<", "=": "="}[op]
		}
		ic := val.GetAConst().GetIval()
		if !isColumn(col, rn) || ic == nil {
			continue
		}
		n := int64(ic.Ival)
		var limit int64
		switch {
		case op == "<=":
			limit = n
		case op == "<":
			limit = n - 1
		case op == "=" && n == 1:
			limit = 1
		default:
			continue
		}
		return limit, append(slices.Clone(conj[:i]), conj[i+1:]...), true
	}
	return 0, nil, false
}

func isColumn(n *pg_query.Node, name string) bool {
	ref := n.GetColumnRef()
	if ref == nil || len(ref.Fields) == 0 {
		return false
	}
	last := ref.Fields[len(ref.Fields)-1].GetString_()
	return last != nil && last.Sval == name
}

// refersTo reports whether the outer query's select list, GROUP BY,
// HAVING or ORDER BY names column name, or selects *.
func refersTo(s *pg_query.SelectStmt, name string) bool {
	found := false
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if found {
			return
		}
		if ref, ok := m.Interface().(*pg_query.ColumnRef); ok {
			last := ref.Fields[len(ref.Fields)-1]
			found = last.GetAStar() != nil || last.GetString_().GetSval() == name
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					visit(v.List().Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				visit(v.Message())
			}
			return !found
		})
	}
	for _, list := range [][]*pg_query.Node{s.TargetList, s.GroupClause, s.SortClause, {s.HavingClause}} {
		for _, n := range list {
			if n != nil {
				visit(n.ProtoReflect())
			}
		}
	}
	return found
}

// windowColumn names the subquery's i-th added column, the i-th of the
// window's PARTITION BY then ORDER BY expressions.
func windowColumn(i int) string { return "?window_" + strconv.Itoa(i) }

// mentions reports whether any of ns names column name.
func mentions(ns []*pg_query.Node, name string) bool {
	return refersTo(&pg_query.SelectStmt{TargetList: ns}, name)
}

// overColumns finds PARTITION BY and ORDER BY among the subquery's added
// columns.
func (q *query) overColumns(r *relExpr, w *pg_query.WindowDef) ([]int, []plan.ColumnOrder, error) {
	next := 0
	col := func(n *pg_query.Node) (int, error) {
		i, err := q.resolve(r, "", windowColumn(next), location(n))
		next++
		return i, err
	}
	var groups []int
	for _, p := range w.PartitionClause {
		c, err := col(p)
		if err != nil {
			return nil, nil, err
		}
		if !slices.Contains(groups, c) {
			groups = append(groups, c)
		}
	}
	if len(w.OrderClause) == 0 {
		return nil, nil, errAt(q.st, sqlerr.FeatureNotSupported, w.Location, "ROW_NUMBER() needs an ORDER BY to rank by")
	}
	var by []plan.ColumnOrder
	for _, n := range w.OrderClause {
		sb := n.GetSortBy()
		c, err := col(sb.Node)
		if err != nil {
			return nil, nil, err
		}
		by = append(by, plan.ColumnOrder{Column: c, Order: sortOrder(sb)})
	}
	return groups, by, nil
}

// groupTopN keeps each group's first limit rows by `by`. Its table is
// keyed by the group, the order columns, then the stream key, and spread
// by the group.
func (q *query) groupTopN(r *relExpr, groups []int, by []plan.ColumnOrder, limit int64) *relExpr {
	if len(groups) == 0 {
		return q.topN(r, by, limit, 0)
	}
	t, kept := topNTable(r.node, groups, by)
	// The output is keyed by the group too: a row whose update moves it to
	// another group leaves one actor and enters another, and downstream
	// may see the insert before the delete. Under (group, key) they are
	// two rows, so their order does not matter.
	key := slices.Clone(groups)
	for _, k := range r.node.StreamKey {
		if !slices.Contains(key, k) {
			key = append(key, k)
		}
	}
	n := &plan.Node{Kind: plan.KindTopN, Inputs: []*plan.Node{r.node}, Schema: r.node.Schema, StreamKey: key,
		TopN: &plan.TopN{OrderBy: kept, Limit: limit, GroupKeys: groups, Table: t}}
	return &relExpr{node: n, cols: r.cols}
}
