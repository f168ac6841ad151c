package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A scalar subquery is planned as a relation of exactly one row. An
// aggregate without GROUP BY is one already. In a batch plan any other
// query is aggregated into one: its row count and the max of its value
// (the value itself when there is one row, NULL when there are none);
// KindSingleRow then reads the value and fails with 21000 on a row where
// the count exceeds one. A streaming plan refuses such a subquery: its
// row count can change, and an error is no result for a view.

// scalarRel is a scalar subquery planned as a relation of one row: its
// value in column val of r, and when counted, its row count in column
// count.
type scalarRel struct {
	r          *relExpr
	val, count int
	counted    bool
	t          types.Type
}

// attachedAt is the scalarSub of sr joined onto a relation at column at.
func (sr scalarRel) attachedAt(at int) *scalarSub {
	return &scalarSub{t: sr.t, col: at + sr.val, attached: true, count: at + sr.count, counted: sr.counted}
}

// scalarPlan plans a scalar subquery: one column, at most one row.
func (q *query) scalarPlan(s *pg_query.SubLink) (scalarRel, error) {
	sel := s.Subselect.GetSelectStmt()
	if q.streaming && !oneRowShape(sel) {
		return scalarRel{}, errOneRow(q, s)
	}
	sub, _, err := q.selectStmt(sel, false)
	if err != nil {
		return scalarRel{}, correlated(err, s)
	}
	vis := sub.visible()
	if len(vis) != 1 {
		return scalarRel{}, errAt(q.st, sqlerr.SyntaxError, s.Location, "subquery must return only one column")
	}
	if oneRowShape(sel) && isSimpleAgg(sub) {
		return scalarRel{r: sub, val: vis[0], t: sub.cols[vis[0]].typ}, nil
	}
	if q.streaming {
		return scalarRel{}, errOneRow(q, s)
	}
	agg, t := q.oneRowAgg(sub, nil, vis[0])
	return scalarRel{r: agg, val: 1, count: 0, counted: true, t: t}, nil
}

func errOneRow(q *query, s *pg_query.SubLink) error {
	return errAt(q.st, sqlerr.FeatureNotSupported, s.Location,
		"a scalar subquery must be an aggregate without GROUP BY, HAVING, LIMIT or OFFSET, so that it is always one row")
}

// oneRowShape reports whether sel has none of the clauses that would let
// an aggregate return other than one row.
func oneRowShape(sel *pg_query.SelectStmt) bool {
	return sel != nil && len(sel.GroupClause) == 0 && sel.HavingClause == nil && sel.LimitCount == nil && sel.LimitOffset == nil
}

// isSimpleAgg reports whether sub is an aggregation without groups under
// projections only: always exactly one row.
func isSimpleAgg(sub *relExpr) bool {
	n := sub.node
	for n.Kind == plan.KindProject {
		n = n.Inputs[0]
	}
	return n.Kind == plan.KindSimpleAgg
}

// oneRowAgg aggregates sub by groups into count(*) and max(column val),
// in that order after the groups, and returns it with the value's type
// (text for a subquery of untyped NULLs, as Postgres resolves it).
func (q *query) oneRowAgg(sub *relExpr, groups []typed, val int) (*relExpr, types.Type) {
	arg := typed{d: expr.Input(val, sub.cols[val].typ), t: sub.cols[val].typ}
	if arg.t.ID == types.Unknown {
		arg, _ = (&binder{q: q}).coerce(arg, types.TVarchar, -1)
	}
	sc := &aggScope{q: q, groups: groups, calls: []*aggCall{
		{kind: plan.AggCountStar, typ: types.TInt64},
		{kind: plan.AggMax, args: []typed{arg}, typ: arg.t},
	}}
	return q.aggNode(sub, sc), arg.t
}
