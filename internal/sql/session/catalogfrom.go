package session

import (
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/types"
)

// The FROM clause of a catalog query: system relations, CTEs and
// subqueries, comma lists filtered as they are built, and joins (nested
// loops, hashed on an equality between the two sides when there is one).

// fromWhere is the cross product of the FROM items (one empty row when
// there are none) filtered by where. Drivers list six or more catalogs
// with commas (JDBC's getImportedKeys), so each AND-ed condition is
// applied as soon as the items joined so far bind every column it names,
// keeping the intermediate products small.
func (c *catEval) fromWhere(items []*pg_query.Node, where *pg_query.Node, outer *env) (*frame, error) {
	conds := conjuncts(where)
	applied := make([]bool, len(conds))
	acc := &frame{rows: [][]any{{}}}
	for k, it := range items {
		f, err := c.fromItem(it, outer)
		if err != nil {
			return nil, err
		}
		acc = cross(acc, f)
		for i, cond := range conds {
			if !applied[i] {
				applied[i] = c.filter(acc, cond, outer, k < len(items)-1)
			}
		}
	}
	for i, cond := range conds {
		if !applied[i] {
			c.filter(acc, cond, outer, false)
		}
	}
	return acc, nil
}

// filter keeps the rows of f where cond holds and reports true; when
// partial, a condition naming a column f does not bind is left alone and
// reported false.
func (c *catEval) filter(f *frame, cond *pg_query.Node, outer *env, partial bool) bool {
	var kept [][]any
	for _, r := range f.rows {
		unbound := false
		e := &env{c: c, cols: f.cols, row: r, outer: outer}
		if partial {
			e.unbound = &unbound
		}
		v := e.eval(cond)
		if unbound {
			return false
		}
		if truthy(v) {
			kept = append(kept, r)
		}
	}
	f.rows = kept
	return true
}

func conjuncts(n *pg_query.Node) []*pg_query.Node {
	if n == nil {
		return nil
	}
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range b.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []*pg_query.Node{n}
}

func cross(a, b *frame) *frame {
	out := &frame{cols: slices.Concat(a.cols, b.cols)}
	for _, l := range a.rows {
		for _, r := range b.rows {
			out.rows = append(out.rows, slices.Concat(l, r))
		}
	}
	return out
}

func (c *catEval) fromItem(n *pg_query.Node, outer *env) (*frame, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_RangeVar:
		return c.rangeVar(x.RangeVar)
	case *pg_query.Node_JoinExpr:
		return c.join(x.JoinExpr, outer)
	case *pg_query.Node_RangeSubselect:
		f, err := c.selectStmt(x.RangeSubselect.Subquery.GetSelectStmt(), outer)
		if err != nil {
			return nil, err
		}
		return requalify(f, x.RangeSubselect.Alias), nil
	case *pg_query.Node_RangeFunction:
		// Set-returning functions (unnest, generate_series, …): empty.
		return requalify(&frame{}, x.RangeFunction.Alias), nil
	}
	return nil, errCatalog("unsupported FROM item %T", n.Node)
}

func requalify(f *frame, alias *pg_query.Alias) *frame {
	if alias == nil {
		return f
	}
	out := &frame{rows: f.rows}
	for i, q := range f.cols {
		q.qual = alias.Aliasname
		if i < len(alias.Colnames) {
			q.name = alias.Colnames[i].GetString_().GetSval()
		}
		out.cols = append(out.cols, q)
	}
	for i := len(f.cols); i < len(alias.Colnames); i++ {
		out.cols = append(out.cols, qcol{qual: alias.Aliasname, name: alias.Colnames[i].GetString_().GetSval(), typ: types.TVarchar})
	}
	return out
}

func (c *catEval) rangeVar(rv *pg_query.RangeVar) (*frame, error) {
	if f, ok := c.ctes[rv.Relname]; ok && rv.Schemaname == "" {
		qual := rv.Relname
		if rv.Alias != nil {
			qual = rv.Alias.Aliasname
		}
		out := &frame{rows: f.rows}
		for _, q := range f.cols {
			out.cols = append(out.cols, qcol{qual: qual, name: q.name, typ: q.typ})
		}
		return out, nil
	}
	system := rv.Schemaname == "pg_catalog" || rv.Schemaname == "information_schema" ||
		(rv.Schemaname == "" && strings.HasPrefix(rv.Relname, "pg_"))
	if !system {
		return nil, errCatalog("relation %s is not a system catalog", rv.Relname)
	}
	t := c.s.systemTable(rv.Schemaname, rv.Relname)
	qual := rv.Relname
	if rv.Alias != nil {
		qual = rv.Alias.Aliasname
	}
	f := &frame{rows: t.rows}
	for _, col := range t.cols {
		f.cols = append(f.cols, qcol{qual: qual, name: col.name, typ: col.typ})
	}
	if len(f.cols) == 0 {
		// A relation with no known columns still binds its name, so
		// references to its columns read as NULL rather than failing.
		f.cols = []qcol{{qual: qual, name: "", typ: types.TVarchar}}
		f.rows = nil
	}
	return f, nil
}

func (c *catEval) join(j *pg_query.JoinExpr, outer *env) (*frame, error) {
	l, err := c.fromItem(j.Larg, outer)
	if err != nil {
		return nil, err
	}
	r, err := c.fromItem(j.Rarg, outer)
	if err != nil {
		return nil, err
	}
	if j.Jointype == pg_query.JoinType_JOIN_RIGHT {
		l, r = r, l
	}
	out := &frame{cols: slices.Concat(l.cols, r.cols)}
	candidates := c.equiJoin(j.Quals, l, r, outer)
	// Candidate pairs are tested in one scratch row; only matches are
	// copied out.
	scratch := make([]any, len(l.cols)+len(r.cols))
	for _, lr := range l.rows {
		matched := false
		copy(scratch, lr)
		for _, rr := range candidates(lr) {
			copy(scratch[len(lr):], rr)
			if c.joinMatches(j, l, r, out.cols, scratch, outer) {
				matched = true
				out.rows = append(out.rows, orient(j, slices.Clone(scratch), len(lr), len(rr)))
			}
		}
		if !matched && j.Jointype != pg_query.JoinType_JOIN_INNER {
			out.rows = append(out.rows, orient(j, slices.Concat(lr, make([]any, len(r.cols))), len(lr), len(r.cols)))
		}
	}
	if j.Jointype == pg_query.JoinType_JOIN_RIGHT {
		out.cols = slices.Concat(r.cols, l.cols)
	}
	return requalify(out, j.Alias), nil
}

// equiJoin returns the right rows that may match a left row: those with
// an equal key when the join condition has a conjunct l.col = r.col
// (catalog joins on OIDs almost always do), else all of them. The whole
// condition is still evaluated on each candidate.
func (c *catEval) equiJoin(quals *pg_query.Node, l, r *frame, outer *env) func([]any) [][]any {
	all := func([]any) [][]any { return r.rows }
	for _, cond := range conjuncts(quals) {
		a := cond.GetAExpr()
		if a == nil || a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 || a.Name[0].GetString_().GetSval() != "=" {
			continue
		}
		if c.unbound(a.Lexpr, l, r, outer) || c.unbound(a.Rexpr, l, r, outer) {
			// A column of a relation Sluice leaves empty (pg_description,
			// …): NULL, so the condition never holds.
			return func([]any) [][]any { return nil }
		}
		li, ri, ok := c.sides(a.Lexpr, a.Rexpr, l, r)
		if !ok {
			continue
		}
		index := map[string][][]any{}
		for _, rr := range r.rows {
			if rr[ri] != nil {
				k := toText(rr[ri]).(string)
				index[k] = append(index[k], rr)
			}
		}
		return func(lr []any) [][]any {
			if lr[li] == nil {
				return nil
			}
			return index[toText(lr[li]).(string)]
		}
	}
	return all
}

// unbound reports whether n is a column reference nothing in scope binds.
func (c *catEval) unbound(n *pg_query.Node, l, r *frame, outer *env) bool {
	qual, name, ok := refName(n)
	if !ok || c.colIndex(l.cols, qual, name) >= 0 || c.colIndex(r.cols, qual, name) >= 0 {
		return false
	}
	for x := outer; x != nil; x = x.outer {
		if c.colIndex(x.cols, qual, name) >= 0 {
			return false
		}
	}
	return true
}

// refName splits a column reference into qualifier and name.
func refName(n *pg_query.Node) (string, string, bool) {
	cr := n.GetColumnRef()
	if cr == nil {
		return "", "", false
	}
	var fields []string
	for _, fl := range cr.Fields {
		if fl.GetString_() == nil {
			return "", "", false // qual.*
		}
		fields = append(fields, fl.GetString_().GetSval())
	}
	if len(fields) > 1 {
		return fields[len(fields)-2], fields[len(fields)-1], true
	}
	return "", fields[0], true
}

// sides resolves two column references to a column of l and one of r,
// in either order; a name both sides bind is ambiguous and refused.
func (c *catEval) sides(x, y *pg_query.Node, l, r *frame) (int, int, bool) {
	ref := func(n *pg_query.Node, f *frame) int {
		qual, name, ok := refName(n)
		if !ok {
			return -1
		}
		return c.colIndex(f.cols, qual, name)
	}
	xl, xr, yl, yr := ref(x, l), ref(x, r), ref(y, l), ref(y, r)
	switch {
	case xl >= 0 && xr < 0 && yr >= 0 && yl < 0:
		return xl, yr, true
	case yl >= 0 && yr < 0 && xr >= 0 && xl < 0:
		return yl, xr, true
	}
	return 0, 0, false
}

// orient puts a right join's row back in FROM order.
func orient(j *pg_query.JoinExpr, row []any, nl, nr int) []any {
	if j.Jointype != pg_query.JoinType_JOIN_RIGHT {
		return row
	}
	return slices.Concat(row[nl:nl+nr], row[:nl])
}

func (c *catEval) joinMatches(j *pg_query.JoinExpr, l, r *frame, cols []qcol, row []any, outer *env) bool {
	e := &env{c: c, cols: cols, row: row, outer: outer}
	for _, u := range j.UsingClause {
		name := u.GetString_().GetSval()
		lv := (&env{c: c, cols: l.cols, row: row[:len(l.cols)]}).lookup([]string{name})
		rv := (&env{c: c, cols: r.cols, row: row[len(l.cols):]}).lookup([]string{name})
		if k, ok := compare(lv, rv); !ok || k != 0 {
			return false
		}
	}
	return j.Quals == nil || truthy(e.eval(j.Quals))
}
