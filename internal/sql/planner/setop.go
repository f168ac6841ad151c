package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// setOp plans UNION [ALL]. UNION ALL keeps every branch's rows apart by a
// hidden branch number plus one hidden slot per branch stream-key column
// (NULL in the other branches), which together are the union's stream
// key. UNION removes duplicates with a Distinct over the visible columns,
// which then are the key.
func (q *query) setOp(s *pg_query.SelectStmt, top bool) (*relExpr, *ordering, error) {
	if s.Op != pg_query.SetOperation_SETOP_UNION {
		return nil, nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "%s is not supported", s.Op.String()[len("SETOP_"):])
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
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	common := make([]types.Type, len(lv))
	for i := range lv {
		a, b := l.cols[lv[i]].typ, r.cols[rv[i]].typ
		t, ok := expr.CommonType(a, b)
		if !ok {
			return nil, nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "UNION types %s and %s cannot be matched", a, b)
		}
		if t.ID == types.Unknown {
			t = types.TVarchar
		}
		common[i] = t
	}
	branches := []*relExpr{l, r}
	var u *relExpr
	if s.All {
		u, err = q.unionAll(branches, common)
	} else {
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
