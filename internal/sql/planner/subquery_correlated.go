package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A correlated scalar subquery, (SELECT agg(x) FROM t2 WHERE t2.k = t1.k
// AND …), is the aggregate grouped by the inner sides of its correlated
// equalities, left-joined on them: an outer row with no inner rows meets
// NULL, which is what an aggregate over no rows gives, except count,
// which gives 0 (COALESCE'd in). Only one aggregate call as the whole
// select list is decorrelated that way. In a batch plan, a select list
// without aggregates is too: (SELECT x FROM t2 WHERE t2.k = t1.k AND …)
// is x's count and max grouped by the inner sides, left-joined on them
// (subquery_scalar.go), so each outer row meets its own count. Anything
// else keeps the error it had.

// correlatedScalar joins s, decorrelated, onto from and returns the
// result and the subquery's column; cause is the error the subquery gave
// when planned alone, returned when s does not fit.
func (q *query) correlatedScalar(from *relExpr, s *pg_query.SubLink, cause error) (*relExpr, *scalarSub, error) {
	sel := s.Subselect.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.TargetList) != 1 || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.DistinctClause) > 0 || sel.WithClause != nil {
		return nil, nil, cause
	}
	call := sel.TargetList[0].GetResTarget().GetVal().GetFuncCall()
	if call == nil || !aggNames[funcName(call)] || call.Over != nil {
		return q.correlatedValue(from, s, sel, cause)
	}
	inner, outer, rest, err := q.correlation(from, sel, s)
	if err != nil {
		return nil, nil, err
	}
	if len(inner) == 0 {
		return nil, nil, cause
	}
	decor := proto.Clone(sel).(*pg_query.SelectStmt)
	decor.WhereClause = andOf(rest)
	decor.TargetList = nil
	for _, n := range inner {
		decor.TargetList = append(decor.TargetList, resTarget(n))
		decor.GroupClause = append(decor.GroupClause, proto.Clone(n).(*pg_query.Node))
	}
	decor.TargetList = append(decor.TargetList, proto.Clone(sel.TargetList[0]).(*pg_query.Node))
	sub, _, err := q.selectStmt(decor, false)
	if err != nil {
		return nil, nil, err
	}
	vis := sub.visible()
	keys, err := q.correlatedKeys(sub, outer, vis[:len(inner)])
	if err != nil {
		return nil, nil, err
	}
	joined, at := q.hashJoinAt(from, hideAll(sub), plan.LeftJoin, keys, nil)
	col := at + vis[len(inner)]
	t := sub.cols[vis[len(inner)]].typ
	if name := funcName(call); name != "count" {
		return joined, &scalarSub{t: t, col: col, attached: true}, nil
	}
	// count over no rows is 0, not NULL.
	var outs []outCol
	for i, c := range joined.cols {
		outs = append(outs, outCol{t: typed{d: expr.Input(i, c.typ), t: c.typ}, name: c.name, qual: c.qual, hidden: c.hidden})
	}
	zero := expr.Node(expr.KindCoalesce, expr.Input(col, t), expr.Literal(int64(0), types.TInt64))
	zero.Type = t
	outs = append(outs, outCol{t: typed{d: zero, t: t}, name: "_count", hidden: true})
	r := q.project(joined, outs, true)
	return r, &scalarSub{t: t, col: len(joined.cols), attached: true}, nil
}

// correlatedValue decorrelates a batch plan's scalar subquery whose
// select list has no aggregate: its value's count and max grouped by the
// inner sides of the correlated equalities, left-joined on them.
func (q *query) correlatedValue(from *relExpr, s *pg_query.SubLink, sel *pg_query.SelectStmt, cause error) (*relExpr, *scalarSub, error) {
	target := sel.TargetList[0]
	if q.streaming || anyAggregate(target) || hasWindow(target) {
		return nil, nil, cause
	}
	inner, outer, rest, err := q.correlation(from, sel, s)
	if err != nil || len(inner) == 0 {
		if err == nil {
			err = cause
		}
		return nil, nil, err
	}
	decor := proto.Clone(sel).(*pg_query.SelectStmt)
	decor.WhereClause, decor.SortClause, decor.TargetList = andOf(rest), nil, nil
	for _, n := range inner {
		decor.TargetList = append(decor.TargetList, resTarget(n))
	}
	decor.TargetList = append(decor.TargetList, proto.Clone(target).(*pg_query.Node))
	sub, _, err := q.selectStmt(decor, false)
	if err != nil {
		return nil, nil, err
	}
	vis := sub.visible()
	var groups []typed
	for _, c := range vis[:len(inner)] {
		groups = append(groups, typed{d: expr.Input(c, sub.cols[c].typ), t: sub.cols[c].typ})
	}
	agg, t := q.oneRowAgg(sub, groups, vis[len(inner)])
	keys, err := q.correlatedKeys(agg, outer, seq(len(inner)))
	if err != nil {
		return nil, nil, err
	}
	joined, at := q.hashJoinAt(from, hideAll(agg), plan.LeftJoin, keys, nil)
	sr := scalarRel{val: len(inner) + 1, count: len(inner), counted: true, t: t}
	return joined, sr.attachedAt(at), nil
}

// hasWindow reports whether n calls a window function.
func hasWindow(n *pg_query.Node) bool {
	found := false
	walkNodes(n, func(x any) bool {
		if f, ok := x.(*pg_query.FuncCall); ok && f.Over != nil {
			found = true
		}
		_, sub := x.(*pg_query.SubLink)
		return !found && !sub
	})
	return found
}

// correlatedKeys pairs each outer expression with the subquery's key
// column, in a common type.
func (q *query) correlatedKeys(sub *relExpr, outer []typed, cols []int) ([]equiKey, error) {
	b := &binder{q: q, clause: "WHERE"}
	keys := make([]equiKey, len(outer))
	for i, x := range outer {
		c := cols[i]
		y := typed{d: expr.Input(c, sub.cols[c].typ), t: sub.cols[c].typ}
		ct, ok := expr.CommonType(x.t, y.t)
		if !ok {
			return nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "operator does not exist: %s = %s", x.t, y.t)
		}
		x, _ = b.coerce(x, ct, -1)
		y, _ = b.coerce(y, ct, -1)
		keys[i] = equiKey{l: x, r: y}
	}
	return keys, nil
}
