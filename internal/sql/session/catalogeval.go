package session

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Drivers and GUI tools (JDBC's DatabaseMetaData, DBeaver, pgAdmin,
// DataGrip) send many catalog queries, different in every version, so
// instead of recognising each text the session evaluates them: a small
// interpreter over pg_query's AST runs SELECT … FROM / JOIN / WHERE /
// GROUP BY / ORDER BY / LIMIT, UNION and subqueries over the virtual
// tables of catalogtables.go. It is lenient where a client would rather
// get an answer than an error: an unknown function or construct reads as
// NULL and an unknown catalog relation as empty. Result column types are
// derived from the query, never from the rows, so Describe (run with NULL
// parameters) and Execute agree.

// qcol is a column of a frame: qualifier (table alias), name, type.
type qcol struct {
	qual, name string
	typ        types.Type
}

// frame is an intermediate relation.
type frame struct {
	cols []qcol
	rows [][]any
}

// catEval evaluates one catalog query for a session.
type catEval struct {
	s       *Session
	ctes    map[string]*frame // WITH queries in scope, by name
	colIdx  map[colKey]int
	regexps map[string]*regexp.Regexp
}

// evalCatalog answers sel from the virtual tables.
func (s *Session) evalCatalog(sel *pg_query.SelectStmt) (_ []pgwire.Column, _ []types.Row, err error) {
	// The evaluator walks whatever AST a client's text produced; a shape
	// it did not expect must cost that query its answer (the caller falls
	// back to an empty result), never the server.
	defer func() {
		if r := recover(); r != nil {
			err = errCatalog("cannot evaluate: %v", r)
		}
	}()
	c := &catEval{s: s, ctes: map[string]*frame{}, colIdx: map[colKey]int{}, regexps: map[string]*regexp.Regexp{}}
	f, err := c.selectStmt(sel, nil)
	if err != nil {
		return nil, nil, err
	}
	cols := make([]pgwire.Column, len(f.cols))
	for i, q := range f.cols {
		cols[i] = pgwire.Column{Name: q.name, Type: q.typ}
	}
	rows := make([]types.Row, len(f.rows))
	for i, r := range f.rows {
		row := make(types.Row, len(r))
		for j, v := range r {
			row[j] = convert(v, f.cols[j].typ)
		}
		rows[i] = row
	}
	return cols, rows, nil
}

func errCatalog(format string, args ...any) error {
	return sqlerr.Errorf(sqlerr.FeatureNotSupported, "catalog query: "+format, args...)
}

func (c *catEval) selectStmt(sel *pg_query.SelectStmt, outer *env) (*frame, error) {
	if sel == nil {
		return nil, errCatalog("not a SELECT")
	}
	if err := c.with(sel.WithClause, outer); err != nil {
		return nil, err
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE {
		return c.setOp(sel, outer)
	}
	if len(sel.ValuesLists) > 0 {
		return c.values(sel, outer)
	}
	src, err := c.fromWhere(sel.FromClause, sel.WhereClause, outer)
	if err != nil {
		return nil, err
	}
	envs := c.rowEnvs(sel, src.cols, src.rows, outer)
	out := &frame{cols: c.targetCols(sel.TargetList, src.cols)}
	var outEnvs []*env
	for _, e := range envs {
		if sel.HavingClause != nil && !truthy(e.eval(sel.HavingClause)) {
			continue
		}
		out.rows = append(out.rows, c.targets(sel.TargetList, e))
		outEnvs = append(outEnvs, e)
	}
	if len(sel.DistinctClause) > 0 {
		out.rows, outEnvs = distinct(out.rows, outEnvs)
	}
	c.orderBy(sel.SortClause, out, outEnvs)
	out.rows = limit(out.rows, sel.LimitOffset, sel.LimitCount)
	return out, nil
}

// with evaluates a WITH clause's queries. A recursive one keeps only its
// first (non-recursive) branch: catalog CTEs walk role or inheritance
// trees, which are one level deep in Sluice.
func (c *catEval) with(w *pg_query.WithClause, outer *env) error {
	if w == nil {
		return nil
	}
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		sel := cte.GetCtequery().GetSelectStmt()
		if w.Recursive && sel != nil && sel.Op != pg_query.SetOperation_SETOP_NONE {
			sel = sel.Larg
		}
		f, err := c.selectStmt(sel, outer)
		if err != nil {
			return err
		}
		for i, col := range cte.Aliascolnames {
			if i < len(f.cols) {
				f.cols[i].name = col.GetString_().GetSval()
			}
		}
		c.ctes[cte.Ctename] = f
	}
	return nil
}

// rowEnvs makes one evaluation environment per output row: one per kept
// row, or one per group when the query groups or aggregates.
func (c *catEval) rowEnvs(sel *pg_query.SelectStmt, cols []qcol, rows [][]any, outer *env) []*env {
	if len(sel.GroupClause) == 0 && !hasAggregate(sel.TargetList) {
		envs := make([]*env, len(rows))
		for i, r := range rows {
			envs[i] = &env{c: c, cols: cols, row: r, outer: outer, all: rows, idx: i}
		}
		return envs
	}
	var order []string
	groups := map[string][][]any{}
	for _, r := range rows {
		e := &env{c: c, cols: cols, row: r, outer: outer}
		var key []string
		for _, g := range sel.GroupClause {
			key = append(key, fmt.Sprintf("%#v", e.eval(g)))
		}
		k := strings.Join(key, "\x00")
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	if len(sel.GroupClause) == 0 && len(order) == 0 {
		order, groups[""] = []string{""}, nil // an aggregate over no rows is one row
	}
	envs := make([]*env, len(order))
	for i, k := range order {
		g := groups[k]
		row := make([]any, len(cols))
		if len(g) > 0 {
			row = g[0]
		}
		envs[i] = &env{c: c, cols: cols, row: row, outer: outer, group: g, grouped: true}
	}
	return envs
}

func hasAggregate(list []*pg_query.Node) bool {
	found := false
	for _, n := range list {
		walkFuncs(n, func(f *pg_query.FuncCall) {
			if f.Over == nil && aggregates[funcName(f)] {
				found = true
			}
		})
	}
	return found
}

// walkFuncs calls fn for the function calls of an expression, not
// descending into subqueries.
func walkFuncs(n *pg_query.Node, fn func(*pg_query.FuncCall)) {
	if n == nil {
		return
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_ResTarget:
		walkFuncs(x.ResTarget.Val, fn)
	case *pg_query.Node_FuncCall:
		fn(x.FuncCall)
		for _, a := range x.FuncCall.Args {
			walkFuncs(a, fn)
		}
	case *pg_query.Node_TypeCast:
		walkFuncs(x.TypeCast.Arg, fn)
	case *pg_query.Node_AExpr:
		walkFuncs(x.AExpr.Lexpr, fn)
		walkFuncs(x.AExpr.Rexpr, fn)
	case *pg_query.Node_CoalesceExpr:
		for _, a := range x.CoalesceExpr.Args {
			walkFuncs(a, fn)
		}
	case *pg_query.Node_CaseExpr:
		for _, w := range x.CaseExpr.Args {
			walkFuncs(w.GetCaseWhen().GetResult(), fn)
		}
		walkFuncs(x.CaseExpr.Defresult, fn)
	}
}

var aggregates = map[string]bool{"count": true, "min": true, "max": true, "sum": true,
	"string_agg": true, "array_agg": true, "bool_and": true, "bool_or": true, "avg": true}

func (c *catEval) setOp(sel *pg_query.SelectStmt, outer *env) (*frame, error) {
	l, err := c.selectStmt(sel.Larg, outer)
	if err != nil {
		return nil, err
	}
	r, err := c.selectStmt(sel.Rarg, outer)
	if err != nil {
		return nil, err
	}
	if len(l.cols) != len(r.cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	switch sel.Op {
	case pg_query.SetOperation_SETOP_UNION:
		l.rows = append(l.rows, r.rows...)
		if !sel.All {
			l.rows, _ = distinct(l.rows, nil)
		}
	case pg_query.SetOperation_SETOP_INTERSECT, pg_query.SetOperation_SETOP_EXCEPT:
		in := map[string]bool{}
		for _, row := range r.rows {
			in[fmt.Sprintf("%#v", row)] = true
		}
		want := sel.Op == pg_query.SetOperation_SETOP_INTERSECT
		l.rows = slices.DeleteFunc(l.rows, func(row []any) bool { return in[fmt.Sprintf("%#v", row)] != want })
	}
	c.orderBy(sel.SortClause, l, nil)
	l.rows = limit(l.rows, sel.LimitOffset, sel.LimitCount)
	return l, nil
}

func (c *catEval) values(sel *pg_query.SelectStmt, outer *env) (*frame, error) {
	f := &frame{}
	for _, l := range sel.ValuesLists {
		e := &env{c: c, outer: outer}
		var row []any
		for _, it := range l.GetList().GetItems() {
			row = append(row, e.eval(it))
		}
		f.rows = append(f.rows, row)
	}
	for i, it := range sel.ValuesLists[0].GetList().GetItems() {
		f.cols = append(f.cols, qcol{name: "column" + strconv.Itoa(i+1), typ: exprType(it, nil)})
	}
	return f, nil
}

func (c *catEval) targetCols(list []*pg_query.Node, src []qcol) []qcol {
	var out []qcol
	for _, n := range list {
		rt := n.GetResTarget()
		if qual, ok := starTarget(rt); ok {
			for _, q := range src {
				if q.name != "" && (qual == "" || strings.EqualFold(q.qual, qual)) {
					out = append(out, qcol{name: q.name, typ: q.typ})
				}
			}
			continue
		}
		out = append(out, qcol{name: targetName(rt), typ: exprType(rt.Val, src)})
	}
	return out
}

// starTarget reports whether rt is * or qual.*.
func starTarget(rt *pg_query.ResTarget) (string, bool) {
	cr := rt.GetVal().GetColumnRef()
	if cr == nil || cr.Fields[len(cr.Fields)-1].GetAStar() == nil {
		return "", false
	}
	if len(cr.Fields) > 1 {
		return cr.Fields[len(cr.Fields)-2].GetString_().GetSval(), true
	}
	return "", true
}

func (c *catEval) targets(list []*pg_query.Node, e *env) []any {
	var row []any
	for _, n := range list {
		rt := n.GetResTarget()
		if qual, ok := starTarget(rt); ok {
			for i, q := range e.cols {
				if q.name != "" && (qual == "" || strings.EqualFold(q.qual, qual)) {
					row = append(row, e.row[i])
				}
			}
			continue
		}
		row = append(row, e.eval(rt.Val))
	}
	return row
}

func distinct(rows [][]any, envs []*env) ([][]any, []*env) {
	seen := map[string]bool{}
	var out [][]any
	var outEnvs []*env
	for i, r := range rows {
		k := fmt.Sprintf("%#v", r)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, r)
		if envs != nil {
			outEnvs = append(outEnvs, envs[i])
		}
	}
	return out, outEnvs
}

// orderBy sorts f's rows: a key naming an output column or giving its
// position reads the output row, any other expression is evaluated in
// the row's source environment (envs, when there is one).
func (c *catEval) orderBy(sorts []*pg_query.Node, f *frame, envs []*env) {
	if len(sorts) == 0 {
		return
	}
	keys := make([][]any, len(f.rows))
	for i := range f.rows {
		for _, sn := range sorts {
			keys[i] = append(keys[i], c.sortKey(sn.GetSortBy().Node, f, i, envs))
		}
	}
	idx := make([]int, len(f.rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		for k, sn := range sorts {
			sb := sn.GetSortBy()
			desc := sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC
			if d := orderCmp(keys[a][k], keys[b][k], desc, sb.SortbyNulls); d != 0 {
				return d
			}
		}
		return 0
	})
	rows := make([][]any, len(idx))
	for i, j := range idx {
		rows[i] = f.rows[j]
	}
	f.rows = rows
}

func (c *catEval) sortKey(n *pg_query.Node, f *frame, i int, envs []*env) any {
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
		name := cr.Fields[0].GetString_().GetSval()
		for j, q := range f.cols {
			if strings.EqualFold(q.name, name) {
				return f.rows[i][j]
			}
		}
	}
	if k := n.GetAConst().GetIval(); k != nil && int(k.Ival) >= 1 && int(k.Ival) <= len(f.cols) {
		return f.rows[i][k.Ival-1]
	}
	if envs == nil {
		return nil
	}
	return envs[i].eval(n)
}

// orderCmp orders a before b: NULLs sort last ascending and first
// descending unless NULLS FIRST/LAST says otherwise, as in Postgres.
func orderCmp(a, b any, desc bool, nulls pg_query.SortByNulls) int {
	nullsFirst := desc
	switch nulls {
	case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
		nullsFirst = true
	case pg_query.SortByNulls_SORTBY_NULLS_LAST:
		nullsFirst = false
	}
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return map[bool]int{true: -1, false: 1}[nullsFirst]
	case b == nil:
		return map[bool]int{true: 1, false: -1}[nullsFirst]
	}
	k, _ := compare(a, b)
	if desc {
		return -k
	}
	return k
}

func limit(rows [][]any, offset, count *pg_query.Node) [][]any {
	if o := offset.GetAConst().GetIval(); o != nil {
		rows = rows[min(int(o.Ival), len(rows)):]
	}
	if n := count.GetAConst().GetIval(); n != nil && int(n.Ival) < len(rows) {
		rows = rows[:max(int(n.Ival), 0)]
	}
	return rows
}
