package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// setOp plans UNION [ALL], INTERSECT and EXCEPT. UNION ALL keeps every branch's rows apart by a
// hidden branch number plus one hidden slot per branch stream-key column
// (NULL in the other branches), which together are the union's stream
// key. UNION removes duplicates with a Distinct over the visible columns,
// which then are the key.
func (q *query) setOp(s *pg_query.SelectStmt, top bool) (*relExpr, *ordering, error) {
	opName := s.Op.String()[len("SETOP_"):]
	if s.Op != pg_query.SetOperation_SETOP_UNION && s.All {
		return nil, nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "%s ALL is not supported", opName)
	}
	l, _, err := q.selectStmt(s.Larg, false)
	if err != nil {
		return nil, nil, err
	}
	r, _, err := q.selectStmt(s.Rarg, false)
	if err != nil {
		return nil, nil, err
	}
	lv, rv := l.visible(), r.visible()
	if len(lv) != len(rv) {
		return nil, nil, sqlerr.Errorf(sqlerr.SyntaxError, "each %s query must have the same number of columns", opName)
	}
	common := make([]types.Type, len(lv))
	for i := range lv {
		a, b := l.cols[lv[i]].typ, r.cols[rv[i]].typ
		t, ok := expr.CommonType(a, b)
		if !ok {
			return nil, nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched", opName, a, b)
		}
		if t.ID == types.Unknown {
			t = types.TVarchar
		}
		common[i] = t
	}
	branches := []*relExpr{l, r}
	var u *relExpr
	switch {
	case s.Op != pg_query.SetOperation_SETOP_UNION:
		u, err = q.intersectExcept(branches, common, s.Op == pg_query.SetOperation_SETOP_EXCEPT)
	case s.All:
		u, err = q.unionAll(branches, common)
	default:
		u, err = q.unionDistinct(branches, common)
	}
	if err != nil {
		return nil, nil, err
	}
	for i, c := range lv {
		u.cols[i].name = l.cols[c].name
	}
	return q.finish(u, s, nil, len(lv), false, top)
}

// branchColumns returns br's visible columns cast to the common types.
func (q *query) branchColumns(br *relExpr, common []types.Type) ([]outCol, error) {
	b := &binder{q: q, scope: br}
	var outs []outCol
	for i, c := range br.visible() {
		t, err := b.coerce(typed{expr.Input(c, br.cols[c].typ), br.cols[c].typ}, common[i], -1)
		if err != nil {
			return nil, err
		}
		outs = append(outs, outCol{t: t, name: br.cols[c].name})
	}
	return outs, nil
}

func (q *query) unionAll(branches []*relExpr, common []types.Type) (*relExpr, error) {
	var slotTypes []types.Type
	for _, br := range branches {
		for _, k := range br.node.StreamKey {
			slotTypes = append(slotTypes, br.cols[k].typ)
		}
	}
	n := len(common)
	u := &relExpr{}
	slot := 0
	for j, br := range branches {
		outs, err := q.branchColumns(br, common)
		if err != nil {
			return nil, err
		}
		outs = append(outs, outCol{t: lit(itoa(j), types.TInt32), name: "_branch", hidden: true})
		for s, st := range slotTypes {
			d := expr.Null(st)
			if s >= slot && s < slot+len(br.node.StreamKey) {
				k := br.node.StreamKey[s-slot]
				d = expr.Input(k, st)
			}
			outs = append(outs, outCol{t: typed{d, st}, name: "_key", hidden: true})
		}
		slot += len(br.node.StreamKey)
		p := q.project(br, outs, false)
		u.node = appendInput(u.node, p.node)
		if j == 0 {
			u.cols = p.cols
		}
	}
	u.node.StreamKey = seq(len(u.cols))[n:]
	return u, nil
}

func (q *query) unionDistinct(branches []*relExpr, common []types.Type) (*relExpr, error) {
	u := &relExpr{}
	for j, br := range branches {
		outs, err := q.branchColumns(br, common)
		if err != nil {
			return nil, err
		}
		p := q.project(br, outs, false)
		u.node = appendInput(u.node, p.node)
		if j == 0 {
			u.cols = p.cols
		}
	}
	u.node.StreamKey = seq(len(u.cols))
	return q.distinct(u), nil
}

func appendInput(u, in *plan.Node) *plan.Node {
	if u == nil {
		u = &plan.Node{Kind: plan.KindUnion, Schema: in.Schema}
	}
	u.Inputs = append(u.Inputs, in)
	return u
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// intersectExcept plans INTERSECT or EXCEPT (without ALL): both branches'
// rows, tagged by branch, are grouped by every visible column and counted
// per branch; a group is kept when both branches have it (INTERSECT) or
// only the left one does (EXCEPT). Grouping treats NULLs as equal, as
// these operators do, and the group keys are the result's stream key.
func (q *query) intersectExcept(branches []*relExpr, common []types.Type, except bool) (*relExpr, error) {
	u, err := q.unionAll(branches, common)
	if err != nil {
		return nil, err
	}
	n := len(common)
	b := &binder{q: q, scope: u}
	sc := &aggScope{q: q, from: b}
	for i, t := range common {
		sc.groups = append(sc.groups, typed{expr.Input(i, t), t})
	}
	for j := range branches {
		f, err := b.call("=", -1, typed{expr.Input(n, types.TInt32), types.TInt32}, lit(itoa(j), types.TInt32))
		if err != nil {
			return nil, err
		}
		sc.calls = append(sc.calls, &aggCall{kind: plan.AggCountStar, typ: types.TInt64, filter: &f})
	}
	r := q.aggNode(u, sc)
	rb := &binder{q: q, scope: r}
	zero := lit("0", types.TInt64)
	left, err := rb.call(">", -1, typed{expr.Input(n, types.TInt64), types.TInt64}, zero)
	if err != nil {
		return nil, err
	}
	op := ">"
	if except {
		op = "="
	}
	right, err := rb.call(op, -1, typed{expr.Input(n+1, types.TInt64), types.TInt64}, zero)
	if err != nil {
		return nil, err
	}
	cond := boolNode(expr.KindAnd, left.d, right.d)
	f := &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{r.node}, Schema: r.node.Schema,
		StreamKey: r.node.StreamKey, Filter: &plan.Filter{Cond: cond.d}}
	r = &relExpr{node: f, cols: r.cols}
	var outs []outCol
	for i := range n {
		outs = append(outs, outCol{t: typed{expr.Input(i, common[i]), common[i]}, name: r.cols[i].name})
	}
	return q.project(r, outs, true), nil
}
