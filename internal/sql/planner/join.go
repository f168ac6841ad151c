package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream/join"
	"github.com/sluice-db/sluice/internal/types"
)

func (q *query) joinExpr(j *pg_query.JoinExpr) (*relExpr, error) {
	left, err := q.fromItem(j.Larg)
	if err != nil {
		return nil, err
	}
	right, err := q.fromItem(j.Rarg)
	if err != nil {
		return nil, err
	}
	var jt plan.JoinType
	switch j.Jointype {
	case pg_query.JoinType_JOIN_INNER:
		jt = plan.InnerJoin
	case pg_query.JoinType_JOIN_LEFT:
		jt = plan.LeftJoin
	case pg_query.JoinType_JOIN_RIGHT:
		jt = plan.RightJoin
	case pg_query.JoinType_JOIN_FULL:
		jt = plan.FullJoin
	default:
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "join type %s is not supported", j.Jointype)
	}
	quals := j.Quals
	using := j.UsingClause
	if j.IsNatural {
		using = naturalColumns(left, right)
	}
	if len(using) > 0 {
		if quals, err = q.usingCondition(left, right, using, jt); err != nil {
			return nil, err
		}
	}
	r, err := q.join(left, right, jt, quals, location(j.Larg))
	if err != nil {
		return nil, err
	}
	if j.Alias != nil {
		r.requalify(j.Alias.Aliasname)
		return r, q.aliasColumns(r, j.Alias)
	}
	return r, nil
}

func naturalColumns(left, right *relExpr) []*pg_query.Node {
	var out []*pg_query.Node
	for _, i := range left.visible() {
		name := left.cols[i].name
		for _, k := range right.visible() {
			if right.cols[k].name == name {
				out = append(out, &pg_query.Node{Node: &pg_query.Node_String_{String_: &pg_query.String{Sval: name}}})
				break
			}
		}
	}
	return out
}

// usingCondition turns USING (a, b) into left.a = right.a AND …, and hides
// the copy of each column that an unqualified reference must not see (the
// right one, or the left one for a RIGHT join).
func (q *query) usingCondition(left, right *relExpr, using []*pg_query.Node, jt plan.JoinType) (*pg_query.Node, error) {
	var conds []*pg_query.Node
	for _, u := range using {
		name := u.GetString_().Sval
		li, err := q.resolve(left, "", name, -1)
		if err != nil {
			return nil, err
		}
		ri, err := q.resolve(right, "", name, -1)
		if err != nil {
			return nil, err
		}
		conds = append(conds, eqNode(inputRef(li), inputRef(ri+len(left.cols))))
		if jt == plan.RightJoin {
			left.cols[li].hidden = true
		} else {
			right.cols[ri].hidden = true
		}
	}
	return andOf(conds), nil
}

// inputRef is a pre-bound column reference: a ColumnRef whose only field
// is a position, which the join binder resolves directly.
func inputRef(i int) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_ParamRef{ParamRef: &pg_query.ParamRef{Number: int32(-1 - i), Location: -1}}}
}

func eqNode(l, r *pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: &pg_query.A_Expr{Kind: pg_query.A_Expr_Kind_AEXPR_OP,
		Name: []*pg_query.Node{{Node: &pg_query.Node_String_{String_: &pg_query.String{Sval: "="}}}}, Lexpr: l, Rexpr: r, Location: -1}}}
}

// equiKey is one equality between the sides, each side an expression over
// that side's own columns.
type equiKey struct {
	l, r     typed
	nullSafe bool
}

// join plans left JOIN right ON cond. Equalities between an expression of
// each side become hash keys (computed by a projection below the join
// when they are not plain columns or their types differ); everything else
// is the residual condition.
func (q *query) join(left, right *relExpr, jt plan.JoinType, cond *pg_query.Node, loc int32) (*relExpr, error) {
	r, _, err := q.joinAt(left, right, jt, cond, loc)
	return r, err
}

// joinAt is join, also returning where the right side's columns start
// in the result (the left side may have gained key columns).
func (q *query) joinAt(left, right *relExpr, jt plan.JoinType, cond *pg_query.Node, loc int32) (*relExpr, int, error) {
	combined := &relExpr{cols: slices.Concat(left.cols, right.cols)}
	b := &binder{q: q, scope: combined, clause: "JOIN conditions"}
	b.hook = func(n *pg_query.Node) (typed, bool, error) {
		if p := n.GetParamRef(); p != nil && p.Number < 0 {
			i := int(-1 - p.Number)
			return typed{d: expr.Input(i, combined.cols[i].typ), t: combined.cols[i].typ}, true, nil
		}
		return typed{}, false, nil
	}
	var keys []equiKey
	var residual []expr.Desc
	nl := len(left.cols)
	for _, c := range conjuncts(cond) {
		t, err := b.boolArg(c, "JOIN/ON")
		if err != nil {
			return nil, 0, err
		}
		if k, ok := splitEqui(t.d, nl, len(combined.cols)); ok {
			if ct, ok := expr.CommonType(k.l.t, k.r.t); ok {
				k.l, _ = b.coerce(k.l, ct, -1)
				k.r, _ = b.coerce(k.r, ct, -1)
				if !repeatsKeyColumn(keys, k) {
					keys = append(keys, k)
					continue
				}
			}
		}
		residual = append(residual, t.d)
	}
	if len(keys) == 0 {
		if q.streaming {
			return nil, 0, errAt(q.st, sqlerr.FeatureNotSupported, loc,
				"streaming joins need an equality condition between the two sides: a CROSS JOIN or a join without one would have to keep and re-emit the whole product on every change")
		}
		one := lit("1", types.TInt32)
		keys = append(keys, equiKey{l: one, r: one})
	}
	r, at := q.hashJoinAt(left, right, jt, keys, residual)
	return r, at, nil
}

// repeatsKeyColumn reports whether k's left or right side is a column
// that is already a key column of that side (t1.a = t2.x AND t3.b = t2.x:
// t2.x twice). A side's state table is keyed by its key columns, which
// must differ, and the equality is as well checked after the match: the
// caller makes it part of the residual condition.
func repeatsKeyColumn(keys []equiKey, k equiKey) bool {
	same := func(a, b typed) bool {
		return a.d.Kind == expr.KindInput && b.d.Kind == expr.KindInput && a.d.Index == b.d.Index && a.t == b.t
	}
	return slices.ContainsFunc(keys, func(o equiKey) bool { return same(o.l, k.l) || same(o.r, k.r) })
}

// splitEqui recognises l = r (or l IS NOT DISTINCT FROM r) where l uses
// only left columns (< nl) and r only right ones, in either order; the
// right expression is rebased onto the right input.
func splitEqui(d expr.Desc, nl, n int) (equiKey, bool) {
	var nullSafe bool
	switch {
	case d.Kind == expr.KindFunc && d.Name == "=" && len(d.Args) == 2:
	case d.Kind == expr.KindIsNotDistinctFrom && len(d.Args) == 2:
		nullSafe = true
	default:
		return equiKey{}, false
	}
	a, c := d.Args[0], d.Args[1]
	sa, sc := side(a, nl), side(c, nl)
	if sa == 2 && sc == 1 {
		a, c, sa, sc = c, a, sc, sa
	}
	if sa != 1 || sc != 2 {
		return equiKey{}, false
	}
	r := rebase(c, -nl)
	return equiKey{l: typed{d: a, t: a.Type}, r: typed{d: r, t: r.Type}, nullSafe: nullSafe}, true
}

// side returns 1 if d reads only left columns, 2 if only right ones, 0 if
// both or none.
func side(d expr.Desc, nl int) int {
	s := 0
	var walk func(d expr.Desc)
	walk = func(d expr.Desc) {
		if d.Kind == expr.KindInput {
			x := 1
			if d.Index >= nl {
				x = 2
			}
			if s == 0 {
				s = x
			} else if s != x {
				s = 3
			}
		}
		for _, a := range d.Args {
			walk(a)
		}
	}
	walk(d)
	if s == 3 {
		return 0
	}
	return s
}

// rebase shifts every input reference of d by delta.
func rebase(d expr.Desc, delta int) expr.Desc {
	r, _ := expr.RemapInputs(d, func(i int) (int, bool) { return i + delta, true })
	return r
}

// keyColumns makes each key expression a column of in: a plain column is
// used as is, anything else is appended by a projection (hidden).
func (q *query) keyColumns(in *relExpr, ks []typed) (*relExpr, []int) {
	var extra []outCol
	cols := make([]int, len(ks))
	for i, k := range ks {
		if k.d.Kind == expr.KindInput && in.cols[k.d.Index].typ == k.t {
			cols[i] = k.d.Index
			continue
		}
		extra = append(extra, outCol{t: k, name: "_key", hidden: true})
		cols[i] = len(in.cols) + len(extra) - 1
	}
	if len(extra) == 0 {
		return in, cols
	}
	var outs []outCol
	for i, c := range in.cols {
		outs = append(outs, outCol{t: typed{d: expr.Input(i, c.typ), t: c.typ}, name: c.name, qual: c.qual, hidden: c.hidden})
	}
	return q.project(in, append(outs, extra...), true), cols
}

func (q *query) hashJoin(left, right *relExpr, jt plan.JoinType, keys []equiKey, residual []expr.Desc) *relExpr {
	r, _ := q.hashJoinAt(left, right, jt, keys, residual)
	return r
}

// hashJoinAt is hashJoin, also returning where the right side's columns
// start in the result (the left side may have gained key columns).
func (q *query) hashJoinAt(left, right *relExpr, jt plan.JoinType, keys []equiKey, residual []expr.Desc) (*relExpr, int) {
	keys = slices.Clone(keys)
	watermarkedKeyFirst(left, right, jt, keys)
	var lk, rk []typed
	nullSafe := make([]bool, len(keys))
	anyNullSafe := false
	for i, k := range keys {
		lk, rk = append(lk, k.l), append(rk, k.r)
		nullSafe[i] = k.nullSafe
		anyNullSafe = anyNullSafe || k.nullSafe
	}
	oldNL := len(left.cols)
	left, lcols := q.keyColumns(left, lk)
	right, rcols := q.keyColumns(right, rk)
	nl := len(left.cols)
	hj := &plan.HashJoin{Type: jt, LeftKeys: lcols, RightKeys: rcols, Output: seq(nl + len(right.cols)),
		LeftTable: sideTable(left.node, lcols), RightTable: sideTable(right.node, rcols)}
	if anyNullSafe {
		hj.NullSafe = nullSafe
	}
	if len(residual) > 0 {
		// Residual inputs were numbered over the original sides; right
		// columns move by the columns added to the left.
		var ds []expr.Desc
		for _, r := range residual {
			ds = append(ds, shiftRight(r, oldNL, nl-oldNL))
		}
		cond := ds[0]
		if len(ds) > 1 {
			cond = expr.Node(expr.KindAnd, ds...)
		}
		hj.Residual = &cond
	}
	if jt == plan.LeftJoin || jt == plan.FullJoin {
		hj.LeftDegreeTable = degreeTable(hj.LeftTable, len(lcols))
	}
	if jt == plan.RightJoin || jt == plan.FullJoin {
		hj.RightDegreeTable = degreeTable(hj.RightTable, len(rcols))
	}
	pending := join.PendingTable()
	hj.PendingTable = &pending
	lsk, rsk := left.node.StreamKey, right.node.StreamKey
	if jt != plan.RightJoin {
		lsk = slices.Concat(lsk, lcols)
	}
	if jt == plan.RightJoin || jt == plan.FullJoin {
		rsk = slices.Concat(rsk, rcols)
	}
	sk := joinStreamKey(lsk, rsk, nl)
	out := &relExpr{cols: slices.Concat(left.cols, right.cols)}
	out.node = &plan.Node{Kind: plan.KindHashJoin, Inputs: []*plan.Node{left.node, right.node},
		Schema: colTypes(out.cols), StreamKey: sk, HashJoin: hj}
	return out, nl
}

// joinStreamKey is the left side's key then the right side's, each
// without repeats. The caller adds join key columns: the left's, or for a
// RIGHT JOIN the right's, or both for a FULL JOIN. The inputs are
// hash-exchanged on the join key, so an update that changes a row's key
// becomes a delete on the old key's actor and an insert on the new key's,
// and their outputs reach the next fragment over different channels in
// either order. Without the key in the stream key the two can be one row —
// a NULL-padded row of a preserved side, or a pair whose both rows moved to
// the same new key in one epoch — and a late delete would remove the new
// row. A matched output has equal left and right keys, so one side's key
// tells them apart; a NULL-padded one needs the preserved side's.
func joinStreamKey(lsk, rsk []int, nl int) []int {
	var sk []int
	add := func(c int) {
		if !slices.Contains(sk, c) {
			sk = append(sk, c)
		}
	}
	for _, k := range lsk {
		add(k)
	}
	for _, k := range rsk {
		add(nl + k)
	}
	return sk
}

// shiftRight moves references to columns >= from by delta.
func shiftRight(d expr.Desc, from, delta int) expr.Desc {
	if delta == 0 {
		return d
	}
	if d.Kind == expr.KindInput && d.Index >= from {
		d.Index += delta
		return d
	}
	if len(d.Args) > 0 {
		args := make([]expr.Desc, len(d.Args))
		for i, a := range d.Args {
			args[i] = shiftRight(a, from, delta)
		}
		d.Args = args
	}
	return d
}
