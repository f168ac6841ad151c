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
// which then are the key. A chain of UNIONs (a UNION b UNION c …, which
// the grammar nests one level per operator) is planned as one union of
// all its operands: nested, every row passed through one projection per
// level, each wider than the last, and 1 000 operands took 10 s.
func (q *query) setOp(s *pg_query.SelectStmt, top bool) (*relExpr, *ordering, error) {
	opName := s.Op.String()[len("SETOP_"):]
	if s.Op != pg_query.SetOperation_SETOP_UNION && s.All {
		return nil, nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "%s ALL is not supported", opName)
	}
	operands := []*pg_query.SelectStmt{s.Larg, s.Rarg}
	if s.Op == pg_query.SetOperation_SETOP_UNION {
		operands = unionOperands(s)
	}
	branches := make([]*relExpr, len(operands))
	for i, o := range operands {
		var err error
		if branches[i], _, err = q.selectStmt(o, false); err != nil {
			return nil, nil, err
		}
	}
	common, err := commonTypes(branches, opName)
	if err != nil {
		return nil, nil, err
	}
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
	l := branches[0]
	for i, c := range l.visible() {
		u.cols[i].name = l.cols[c].name
	}
	return q.finish(u, s, nil, len(common), false, top)
}

// unionOperands returns the operands of the UNION s, left to right, with
// the operands of the UNIONs nested in it that can merge into it: a
// UNION ALL takes in only UNION ALLs, a UNION any UNION (duplicates go
// either way), and neither one that sorts, limits or has a WITH.
func unionOperands(s *pg_query.SelectStmt) []*pg_query.SelectStmt {
	var rights []*pg_query.SelectStmt // the left spine's right operands, last first
	left := s
	for mergesInto(left, s) {
		rights = append(rights, left.Rarg)
		left = left.Larg
	}
	out := []*pg_query.SelectStmt{left}
	for i := len(rights) - 1; i >= 0; i-- {
		if r := rights[i]; mergesInto(r, s) {
			out = append(out, unionOperands(r)...)
		} else {
			out = append(out, r)
		}
	}
	return out
}

// mergesInto reports whether the operand o of the UNION s (or s itself)
// can be planned as part of s.
func mergesInto(o, s *pg_query.SelectStmt) bool {
	if o == s {
		return true
	}
	if o.Op != pg_query.SetOperation_SETOP_UNION || s.All && !o.All {
		return false
	}
	return len(o.SortClause) == 0 && o.LimitCount == nil && o.LimitOffset == nil &&
		o.WithClause == nil && len(o.LockingClause) == 0
}

// commonTypes resolves the branches' column types pairwise from the left,
// as Postgres does for a chain of set operations: at each step the types
// so far and the next branch's must have a common type; a literal of no
// type (NULL, 'text') takes the other side's, and one in both becomes
// varchar.
func commonTypes(branches []*relExpr, opName string) ([]types.Type, error) {
	first := branches[0]
	fv := first.visible()
	common := make([]types.Type, len(fv))
	for i, c := range fv {
		common[i] = first.colType(c)
	}
	for _, br := range branches[1:] {
		bv := br.visible()
		if len(bv) != len(common) {
			return nil, sqlerr.Errorf(sqlerr.SyntaxError, "each %s query must have the same number of columns", opName)
		}
		for i, c := range bv {
			a, b := common[i], br.colType(c)
			t, ok := expr.CommonType(a, b)
			if !ok {
				return nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched", opName, a, b)
			}
			if t.ID == types.Unknown {
				t = types.TVarchar
			}
			common[i] = t
		}
	}
	for i, t := range common {
		if t.ID == types.Unknown { // one branch
			common[i] = types.TVarchar
		}
	}
	return common, nil
}

// colType is column c's type for set operations: unknown for a literal of
// no type.
func (r *relExpr) colType(c int) types.Type {
	if r.cols[c].unknown {
		return types.TUnknown
	}
	return r.cols[c].typ
}

// branchColumns returns br's visible columns cast to the common types.
func (q *query) branchColumns(br *relExpr, common []types.Type) ([]outCol, error) {
	b := &binder{q: q, scope: br}
	var outs []outCol
	for i, c := range br.visible() {
		t, err := b.coerce(typed{d: expr.Input(c, br.cols[c].typ), t: br.cols[c].typ}, common[i], -1)
		if err != nil {
			return nil, err
		}
		outs = append(outs, outCol{t: t, name: br.cols[c].name})
	}
	return outs, nil
}

func (q *query) unionAll(branches []*relExpr, common []types.Type) (*relExpr, error) {
	slotTypes, slotsOf := keySlots(branches)
	n := len(common)
	u := &relExpr{}
	for j, br := range branches {
		outs, err := q.branchColumns(br, common)
		if err != nil {
			return nil, err
		}
		outs = append(outs, outCol{t: lit(itoa(j), types.TInt32), name: "_branch", hidden: true})
		keyAt := make(map[int]int, len(br.node.StreamKey)) // slot → the branch's column
		for i, k := range br.node.StreamKey {
			keyAt[slotsOf[j][i]] = k
		}
		for s, st := range slotTypes {
			d := expr.Null(st)
			if k, ok := keyAt[s]; ok {
				d = expr.Input(k, st)
			}
			outs = append(outs, outCol{t: typed{d: d, t: st}, name: "_key", hidden: true})
		}
		p := q.project(br, outs, false)
		// The branch's key is the union's (its number and key slots), not
		// every column: a branch in a fragment of its own is dispatched by
		// it, and an update's two halves must travel one path to keep
		// their order (with every column, a global count's U- and U+ went
		// to different actors and reached the view in either order).
		p.node.StreamKey = seq(len(p.cols))[n:]
		u.node = appendInput(u.node, p.node)
		if j == 0 {
			u.cols = p.cols
		}
	}
	u.node.StreamKey = seq(len(u.cols))[n:]
	return u, nil
}

// keySlots lays out the union's hidden key slots: branch j's i-th stream
// key column goes to slot slotsOf[j][i], of its type. Branches share
// slots (the branch number tells their rows apart), so there are as many
// slots of a type as the most any one branch needs, not one per branch:
// a thousand-branch union of one-key branches has one slot, not a
// thousand-column key on every row.
func keySlots(branches []*relExpr) (slotTypes []types.Type, slotsOf [][]int) {
	slotsOf = make([][]int, len(branches))
	for j, br := range branches {
		used := make([]bool, len(slotTypes))
		for _, k := range br.node.StreamKey {
			t := br.cols[k].typ
			s := 0
			for s < len(slotTypes) && (used[s] || slotTypes[s] != t) {
				s++
			}
			if s == len(slotTypes) {
				slotTypes = append(slotTypes, t)
				used = append(used, false)
			}
			used[s] = true
			slotsOf[j] = append(slotsOf[j], s)
		}
	}
	return slotTypes, slotsOf
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
		sc.groups = append(sc.groups, typed{d: expr.Input(i, t), t: t})
	}
	for j := range branches {
		f, err := b.call("=", -1, typed{d: expr.Input(n, types.TInt32), t: types.TInt32}, lit(itoa(j), types.TInt32))
		if err != nil {
			return nil, err
		}
		sc.calls = append(sc.calls, &aggCall{kind: plan.AggCountStar, typ: types.TInt64, filter: &f})
	}
	r := q.aggNode(u, sc)
	rb := &binder{q: q, scope: r}
	zero := lit("0", types.TInt64)
	left, err := rb.call(">", -1, typed{d: expr.Input(n, types.TInt64), t: types.TInt64}, zero)
	if err != nil {
		return nil, err
	}
	op := ">"
	if except {
		op = "="
	}
	right, err := rb.call(op, -1, typed{d: expr.Input(n+1, types.TInt64), t: types.TInt64}, zero)
	if err != nil {
		return nil, err
	}
	cond := boolNode(expr.KindAnd, left.d, right.d)
	f := &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{r.node}, Schema: r.node.Schema,
		StreamKey: r.node.StreamKey, Filter: &plan.Filter{Cond: cond.d}}
	r = &relExpr{node: f, cols: r.cols}
	var outs []outCol
	for i := range n {
		outs = append(outs, outCol{t: typed{d: expr.Input(i, common[i]), t: common[i]}, name: r.cols[i].name})
	}
	return q.project(r, outs, true), nil
}
