package planner

import (
	"fmt"
	"math"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// fromClause plans the FROM list. Items separated by commas are joined
// left to right; WHERE conjuncts that relate an item to those before it
// become that join's condition (so `FROM a, b WHERE a.x = b.y` is an
// equi-join, not a cross join). The conjuncts not used are returned as
// the remaining WHERE condition.
func (q *query) fromClause(items []*pg_query.Node, where *pg_query.Node) (*relExpr, *pg_query.Node, error) {
	if len(items) == 0 {
		return q.unitRow(), where, nil
	}
	if !q.streaming && len(items) > 1 {
		return q.fromClauseBatch(items, where)
	}
	acc, err := q.fromItem(items[0])
	if err != nil {
		return nil, nil, err
	}
	conj := conjuncts(where)
	for _, it := range items[1:] {
		right, err := q.fromItem(it)
		if err != nil {
			return nil, nil, err
		}
		var on, rest []*pg_query.Node
		combined := &relExpr{cols: slices.Concat(acc.cols, right.cols)}
		for _, c := range conj {
			b := &binder{q: q, scope: combined, clause: "WHERE"}
			if _, err := b.bind(c); err == nil && !q.bindsIn(c, acc) && !q.bindsIn(c, right) {
				on = append(on, c)
			} else {
				rest = append(rest, c)
			}
		}
		conj = rest
		if acc, err = q.join(acc, right, plan.InnerJoin, andOf(on), location(it)); err != nil {
			return nil, nil, err
		}
	}
	return acc, andOf(conj), nil
}

// bindsIn reports whether n binds over r alone. Where a condition goes
// is decided by the FROM items' own columns: a name that is not theirs
// does not bind, even when the query around an apply subquery has it.
func (q *query) bindsIn(n *pg_query.Node, r *relExpr) bool {
	defer q.hideOuter()()
	b := &binder{q: q, scope: r, clause: "WHERE"}
	_, err := b.bind(n)
	return err == nil
}

// conjuncts splits a condition at its top-level ANDs.
func conjuncts(n *pg_query.Node) []*pg_query.Node {
	if n == nil {
		return nil
	}
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range be.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []*pg_query.Node{n}
}

func andOf(ns []*pg_query.Node) *pg_query.Node {
	switch len(ns) {
	case 0:
		return nil
	case 1:
		return ns[0]
	}
	return &pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{
		Boolop: pg_query.BoolExprType_AND_EXPR, Args: ns, Location: -1}}}
}

func (q *query) fromItem(n *pg_query.Node) (*relExpr, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_RangeVar:
		return q.rangeVar(x.RangeVar)
	case *pg_query.Node_RangeSubselect:
		return q.subselect(x.RangeSubselect)
	case *pg_query.Node_JoinExpr:
		return q.joinExpr(x.JoinExpr)
	case *pg_query.Node_RangeFunction:
		return q.rangeFunction(x.RangeFunction)
	}
	return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "FROM item not supported: %s", nodeName(n))
}

func (q *query) rangeVar(rv *pg_query.RangeVar) (*relExpr, error) {
	qual := rv.Relname
	if rv.Alias != nil {
		qual = rv.Alias.Aliasname
	}
	var r *relExpr
	if c := q.lookupCTE(rv.Relname); c != nil && rv.Schemaname == "" {
		var err error
		if r, err = c.node(); err != nil {
			return nil, err
		}
		r.requalify(qual)
	} else if isSystemSchema(rv) {
		var err error
		if r, err = q.systemScan(rv, qual); err != nil {
			return nil, err
		}
	} else if pr, ok, err := pgCatalogRelation(rv); ok || err != nil {
		if err != nil {
			return nil, withPos(q.st, err, rv.Location)
		}
		if r, err = q.pgCatalogScan(pr, rv.Location, qual); err != nil {
			return nil, err
		}
	} else {
		rel, ok := q.p.cat.ByName(rv.Relname)
		if !ok {
			return nil, errAt(q.st, sqlerr.UndefinedTable, rv.Location, "relation %q does not exist", rv.Relname)
		}
		if rel.Kind == catalog.KindSink {
			return nil, errAt(q.st, sqlerr.WrongObjectType, rv.Location, "%q is a sink: it writes rows out and has none to read", rv.Relname)
		}
		q.p.reads = append(q.p.reads, rel)
		var err error
		if r, err = q.scanRelation(rel, qual); err != nil {
			return nil, err
		}
	}
	return r, q.aliasColumns(r, rv.Alias)
}

// aliasColumns renames the visible columns by an alias's column list.
func (q *query) aliasColumns(r *relExpr, a *pg_query.Alias) error {
	if a == nil || len(a.Colnames) == 0 {
		return nil
	}
	vis := r.visible()
	if len(a.Colnames) > len(vis) {
		return sqlerr.Errorf(sqlerr.InvalidColumnReference, "table %q has %d columns available but %d columns specified",
			a.Aliasname, len(vis), len(a.Colnames))
	}
	for i, cn := range a.Colnames {
		r.cols[vis[i]].name = cn.GetString_().Sval
	}
	return nil
}

func (q *query) subselect(s *pg_query.RangeSubselect) (*relExpr, error) {
	if s.Lateral {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "LATERAL subqueries are not supported")
	}
	r, _, err := q.selectStmt(s.Subquery.GetSelectStmt(), false)
	if err != nil {
		return nil, err
	}
	if s.Alias != nil {
		r.requalify(s.Alias.Aliasname)
	} else {
		r.requalify("")
	}
	return r, q.aliasColumns(r, s.Alias)
}

// pushCTEs brings a WITH clause's queries into scope. Each reference
// plans the CTE's query afresh (a streaming plan is a tree), in the scope
// of the CTEs defined before it.
func (q *query) pushCTEs(w *pg_query.WithClause) (pop func(), err error) {
	if w.Recursive {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, w.Location, "WITH RECURSIVE is not supported")
	}
	saved := q.ctes
	level := map[string]*cte{}
	q.ctes = append(slices.Clone(q.ctes), level)
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		if _, dup := level[c.Ctename]; dup {
			q.ctes = saved
			return nil, errAt(q.st, sqlerr.Code("42712"), c.Location, "WITH query name %q specified more than once", c.Ctename)
		}
		scope := slices.Clone(q.ctes)
		body := c.Ctequery.GetSelectStmt()
		if body == nil {
			q.ctes = saved
			return nil, errAt(q.st, sqlerr.FeatureNotSupported, c.Location, "only SELECT is supported in WITH")
		}
		names := c.Aliascolnames
		// The query around an apply subquery is in scope where the WITH
		// is written, not where the CTE is read.
		defOuter := q.outer
		level[c.Ctename] = &cte{name: c.Ctename, node: func() (*relExpr, error) {
			outer, readOuter := q.ctes, q.outer
			q.ctes, q.outer = scope, defOuter
			defer func() { q.ctes, q.outer = outer, readOuter }()
			r, _, err := q.selectStmt(body, false)
			if err != nil {
				return nil, err
			}
			return r, q.aliasColumns(r, &pg_query.Alias{Aliasname: c.Ctename, Colnames: names})
		}}
	}
	return func() { q.ctes = saved }, nil
}

// unitRow is the one row a SELECT without FROM computes over: a hidden
// constant key and nothing else.
func (q *query) unitRow() *relExpr {
	n := &plan.Node{Kind: plan.KindValues, Schema: []types.Type{types.TInt64}, StreamKey: []int{0},
		Values: &plan.Values{Rows: [][]expr.Desc{{expr.Literal(int64(0), types.TInt64)}}}}
	return &relExpr{node: n, cols: []column{{name: "_row", typ: types.TInt64, hidden: true}}}
}

// values plans VALUES (…), (…): constant rows, plus a hidden row number
// as the stream key.
func (q *query) values(lists []*pg_query.Node) (*relExpr, error) {
	b := &binder{q: q, clause: "VALUES"}
	var rows [][]typed
	var nodes [][]*pg_query.Node
	for _, l := range lists {
		items := l.GetList().GetItems()
		if len(rows) > 0 && len(items) != len(rows[0]) {
			return nil, errAt(q.st, sqlerr.SyntaxError, location(items[0]), "VALUES lists must all be the same length")
		}
		row := make([]typed, len(items))
		for i, it := range items {
			t, err := b.bind(it)
			if err != nil {
				return nil, err
			}
			row[i] = t
		}
		rows, nodes = append(rows, row), append(nodes, items)
	}
	width := len(rows[0])
	out := &relExpr{}
	descs := make([][]expr.Desc, len(rows))
	for c := 0; c < width; c++ {
		col := make([]typed, len(rows))
		colNodes := make([]*pg_query.Node, len(rows))
		for r := range rows {
			col[r], colNodes[r] = rows[r][c], nodes[r][c]
		}
		u, err := b.unify("VALUES", col, colNodes)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			descs[r] = append(descs[r], u[r].d)
		}
		out.cols = append(out.cols, column{name: fmt.Sprintf("column%d", c+1), typ: u[0].t})
	}
	for r := range descs {
		descs[r] = append(descs[r], expr.Literal(int64(r), types.TInt64))
	}
	out.cols = append(out.cols, column{name: "_row", typ: types.TInt64, hidden: true})
	out.node = &plan.Node{Kind: plan.KindValues, Schema: colTypes(out.cols), StreamKey: []int{width},
		Values: &plan.Values{Rows: descs}}
	return out, nil
}

// maxSeriesRows bounds generate_series, which is expanded into constant
// rows at plan time.
const maxSeriesRows = 100_000

func (q *query) rangeFunction(f *pg_query.RangeFunction) (*relExpr, error) {
	if len(f.Functions) != 1 || f.Lateral {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "only generate_series(start, stop[, step]), unnest(array), TUMBLE and HOP are supported in FROM")
	}
	fc := f.Functions[0].GetList().GetItems()[0].GetFuncCall()
	if fc != nil && isTimeWindow(funcName(fc)) && !f.Ordinality {
		return q.timeWindow(f, fc)
	}
	if fc != nil && !f.Ordinality {
		if r, ok, err := q.pgCatalogFunction(f, fc); ok || err != nil {
			return r, err
		}
	}
	if fc != nil && !q.streaming && (funcName(fc) == "unnest" || funcName(fc) == "generate_series") {
		if r, ok, err := q.functionScan(f, fc); ok || err != nil {
			return r, err
		}
	}
	if fc == nil || funcName(fc) != "generate_series" || len(fc.Args) < 2 || len(fc.Args) > 3 || f.Ordinality {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "only generate_series(start, stop[, step]), unnest(array), TUMBLE and HOP are supported in FROM")
	}
	b := &binder{q: q, clause: "functions in FROM"}
	var bounds []int64
	typ := types.TInt32
	for _, a := range fc.Args {
		t, err := b.bind(a)
		if err != nil {
			return nil, err
		}
		if !t.t.IsInteger() {
			return nil, errAt(q.st, sqlerr.UndefinedFunction, fc.Location, "function generate_series(%s) is not supported", t.t)
		}
		if t.t.ID == types.Int64 {
			typ = types.TInt64
		}
		d, err := evalConst(t, types.TInt64)
		if err != nil || d == nil {
			return nil, errAt(q.st, sqlerr.InvalidParameterValue, location(a), "generate_series arguments must be constant and not null")
		}
		bounds = append(bounds, d.(int64))
	}
	step := int64(1)
	if len(bounds) == 3 {
		step = bounds[2]
	}
	if step == 0 {
		return nil, errAt(q.st, sqlerr.InvalidParameterValue, fc.Location, "step size cannot equal zero")
	}
	var rows [][]expr.Desc
	for v := bounds[0]; (step > 0 && v <= bounds[1]) || (step < 0 && v >= bounds[1]); v += step {
		if len(rows) >= maxSeriesRows {
			return nil, errAt(q.st, sqlerr.ProgramLimitExceeded, fc.Location, "generate_series is limited to %d rows", maxSeriesRows)
		}
		rows = append(rows, []expr.Desc{expr.Literal(v, typ)})
		if step > 0 && v > math.MaxInt64-step || step < 0 && v < math.MinInt64-step {
			break // the next value is past the type's range, so past stop
		}
	}
	name := "generate_series"
	if f.Alias != nil {
		name = f.Alias.Aliasname
	}
	r := &relExpr{cols: []column{{qual: name, name: name, typ: typ}}}
	if f.Alias != nil && len(f.Alias.Colnames) == 1 {
		r.cols[0].name = f.Alias.Colnames[0].GetString_().Sval
	}
	r.node = &plan.Node{Kind: plan.KindValues, Schema: []types.Type{typ}, StreamKey: []int{0}, Values: &plan.Values{Rows: rows}}
	return r, nil
}
