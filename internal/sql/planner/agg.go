package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// aggCall is an aggregate call bound over the FROM scope.
type aggCall struct {
	kind     plan.AggKind
	args     []typed
	distinct bool
	filter   *typed
	order    []typed
	orders   []codec.Order
	typ      types.Type
}

func (a *aggCall) equal(b *aggCall) bool {
	if a.kind != b.kind || a.distinct != b.distinct || len(a.args) != len(b.args) || len(a.order) != len(b.order) ||
		(a.filter == nil) != (b.filter == nil) || !slices.Equal(a.orders, b.orders) {
		return false
	}
	for i := range a.args {
		if !descEqual(a.args[i].d, b.args[i].d) {
			return false
		}
	}
	for i := range a.order {
		if !descEqual(a.order[i].d, b.order[i].d) {
			return false
		}
	}
	return a.filter == nil || descEqual(a.filter.d, b.filter.d)
}

// aggScope binds expressions above a GROUP BY: grouped expressions and
// aggregate calls become columns of the aggregation's output.
type aggScope struct {
	q      *query
	from   *binder
	groups []typed
	calls  []*aggCall
	// extra are the columns joined onto the aggregation's output after
	// it (scalar subqueries), which expressions above it may read.
	extra []types.Type
	// self binds above the aggregation, and named are the query's named
	// windows: a window call's arguments and window may hold aggregate
	// calls, found before the aggregation is planned (windowPrepass).
	self  *binder
	named []*pg_query.Node
}

func (s *aggScope) schema() []types.Type {
	ts := make([]types.Type, 0, len(s.groups)+len(s.calls))
	for _, g := range s.groups {
		ts = append(ts, g.t)
	}
	for _, c := range s.calls {
		ts = append(ts, c.typ)
	}
	return append(ts, s.extra...)
}

func (s *aggScope) hook(n *pg_query.Node) (typed, bool, error) {
	if n.GetSubLink() != nil {
		return typed{}, false, nil // a scalar subquery: joined onto the aggregation's output
	}
	if f := n.GetFuncCall(); f != nil && f.Over != nil && s.self != nil {
		return s.windowPrepass(f)
	}
	if f := n.GetFuncCall(); f != nil && aggNames[funcName(f)] && f.Over == nil {
		if len(scalarSubLinks(append(slices.Clone(f.Args), f.AggFilter)...)) > 0 {
			return typed{}, true, errAt(s.q.st, sqlerr.FeatureNotSupported, f.Location,
				"a subquery inside an aggregate's argument or FILTER is not supported")
		}
		i, err := s.register(f)
		if err != nil {
			return typed{}, true, err
		}
		t := s.calls[i].typ
		return typed{d: expr.Input(len(s.groups)+i, t), t: t}, true, nil
	}
	if n.GetAConst() != nil || hasAggregate(n) {
		return typed{}, false, nil
	}
	t, err := s.from.bind(n)
	if err != nil {
		if n.GetColumnRef() != nil {
			return typed{}, true, err
		}
		return typed{}, false, nil
	}
	if !usesInput(t.d) && usesOuter(t.d) {
		return t, true, nil // the enclosing query's row: one value per group
	}
	for i, g := range s.groups {
		if descEqual(g.d, t.d) {
			return typed{d: expr.Input(i, g.t), t: g.t}, true, nil
		}
	}
	if t.d.Kind == expr.KindInput {
		if g, ok := s.grouped(t.d.Index); ok {
			return g, true, nil
		}
	}
	if cr := n.GetColumnRef(); cr != nil {
		qual, name, _ := columnName(cr)
		if qual != "" {
			name = qual + "." + name
		}
		return typed{}, true, errAt(s.q.st, sqlerr.GroupingError, cr.Location,
			"column %q must appear in the GROUP BY clause or be used in an aggregate function", name)
	}
	return typed{}, false, nil
}

// grouped finds the FROM scope's column i among the group keys. A column
// its table's grouped primary key determines becomes a group key too
// (grouping by it changes no group), as Postgres allows.
func (s *aggScope) grouped(i int) (typed, bool) {
	if k := s.groupIndex(i); k >= 0 {
		return typed{d: expr.Input(k, s.groups[k].t), t: s.groups[k].t}, true
	}
	if !s.dependent(i) {
		return typed{}, false
	}
	t := s.from.scope.cols[i].typ
	s.groups = append(s.groups, typed{d: expr.Input(i, t), t: t})
	return typed{d: expr.Input(len(s.groups)-1, t), t: t}, true
}

func (s *aggScope) groupIndex(i int) int {
	in := expr.Input(i, s.from.scope.cols[i].typ)
	return slices.IndexFunc(s.groups, func(g typed) bool { return descEqual(g.d, in) })
}

// dependent reports whether scope column i comes from a table scan whose
// primary key columns are all group keys.
func (s *aggScope) dependent(i int) bool {
	cols := s.from.scope.cols
	if cols[i].src == 0 {
		return false
	}
	for j, c := range cols {
		if c.src == cols[i].src && c.key && s.groupIndex(j) < 0 {
			return false
		}
	}
	return true
}

// register binds an aggregate call and returns its index among the calls.
func (s *aggScope) register(f *pg_query.FuncCall) (int, error) {
	c, err := s.bindCall(f)
	if err != nil {
		return 0, err
	}
	for i, old := range s.calls {
		if old.equal(c) {
			return i, nil
		}
	}
	s.calls = append(s.calls, c)
	return len(s.calls) - 1, nil
}

func (s *aggScope) bindCall(f *pg_query.FuncCall) (*aggCall, error) {
	name := funcName(f)
	fb := *s.from
	fb.clause = "arguments of aggregate functions"
	c := &aggCall{distinct: f.AggDistinct}
	for _, a := range f.Args {
		t, err := fb.bind(a)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, t)
	}
	if err := s.resolveKind(c, name, f); err != nil {
		return nil, err
	}
	if f.AggFilter != nil {
		t, err := fb.boolArg(f.AggFilter, "FILTER")
		if err != nil {
			return nil, err
		}
		c.filter = &t
	}
	if c.kind == plan.AggStringAgg || c.kind == plan.AggArrayAgg {
		for _, o := range f.AggOrder {
			sb := o.GetSortBy()
			t, err := fb.bind(sb.Node)
			if err != nil {
				return nil, err
			}
			c.order, c.orders = append(c.order, t), append(c.orders, sortOrder(sb))
		}
	}
	return c, nil
}

// resolveKind picks the aggregate and its Postgres result type.
func (s *aggScope) resolveKind(c *aggCall, name string, f *pg_query.FuncCall) error {
	undefined := func() error {
		var ts []types.Type
		for _, a := range c.args {
			ts = append(ts, a.t)
		}
		return errAt(s.q.st, sqlerr.UndefinedFunction, f.Location, "function %s(%s) does not exist", name, typeList(ts))
	}
	if f.AggStar {
		if name != "count" {
			return errAt(s.q.st, sqlerr.SyntaxError, f.Location, "%s(*) is not an aggregate", name)
		}
		c.kind, c.typ, c.distinct = plan.AggCountStar, types.TInt64, false
		return nil
	}
	want := 1
	if name == "string_agg" {
		want = 2
	}
	if len(c.args) != want {
		return undefined()
	}
	for i := range c.args {
		if c.args[i].t.ID == types.Unknown {
			c.args[i], _ = s.from.coerce(c.args[i], types.TVarchar, location(f.Args[i]))
		}
	}
	arg := c.args[0].t
	switch name {
	case "count":
		c.kind, c.typ = plan.AggCount, types.TInt64
	case "sum":
		c.kind = plan.AggSum
		switch {
		case arg.ID == types.Int16 || arg.ID == types.Int32:
			c.typ = types.TInt64
		case arg.ID == types.Int64 || arg.ID == types.Decimal:
			c.typ = types.TDecimal
		case arg.IsFloat():
			c.typ = arg
		}
	case "avg":
		c.kind = plan.AggAvg
		switch {
		case arg.IsInteger() || arg.ID == types.Decimal:
			c.typ = types.TDecimal
		case arg.IsFloat():
			c.typ = types.TFloat64
		}
	case "min", "max":
		c.kind, c.typ, c.distinct = plan.AggMin, arg, false
		if name == "max" {
			c.kind = plan.AggMax
		}
	case "bool_and", "every", "bool_or":
		c.kind = plan.AggBoolAnd
		if name == "bool_or" {
			c.kind = plan.AggBoolOr
		}
		if arg.ID == types.Bool {
			c.typ = types.TBool
		}
	case "string_agg":
		c.kind = plan.AggStringAgg
		if arg.ID == types.Varchar && c.args[1].t.ID == types.Varchar {
			c.typ = arg
		}
	case "array_agg":
		c.kind = plan.AggArrayAgg
		if arr := types.ArrayOf(arg); arr.Valid() {
			c.typ = arr
		}
	}
	if c.typ.ID == types.Unknown {
		return undefined()
	}
	return nil
}

func typeList(ts []types.Type) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s
}

// aggregate plans GROUP BY, the aggregate calls of the select list, HAVING
// and ORDER BY, and HAVING's filter. It returns the relation after HAVING
// and the binder for expressions above the aggregation.
func (q *query) aggregate(from *relExpr, s *pg_query.SelectStmt) (*relExpr, *binder, error) {
	sc := &aggScope{q: q, from: &binder{q: q, scope: from, clause: "GROUP BY"}}
	for _, g := range s.GroupClause {
		t, err := q.groupExpr(sc.from, g, s.TargetList)
		if err != nil {
			return nil, nil, err
		}
		if !slices.ContainsFunc(sc.groups, func(x typed) bool { return descEqual(x.d, t.d) }) {
			sc.groups = append(sc.groups, t)
		}
	}
	if q.streaming {
		watermarkedFirst(from, sc.groups)
	}
	sc.from.clause = "WHERE"
	sorts := sortNodes(s)
	if err := q.preplanScalars(from, slices.Concat(s.TargetList, []*pg_query.Node{s.HavingClause}, sorts)...); err != nil {
		return nil, nil, err
	}
	if ws, err := q.windowFuncs(s.HavingClause); err != nil || len(ws) > 0 {
		if err == nil {
			err = errAt(q.st, sqlerr.WindowingError, ws[0].Location, "window functions are not allowed in HAVING")
		}
		return nil, nil, err
	}
	b := &binder{q: q, scope: from, schema: sc.schema, hook: sc.hook, grouped: sc.grouped}
	sc.self, sc.named = b, s.WindowClause
	// Aggregates in the named windows are registered now, used or not.
	if err := q.checkNamedWindows(b, s.WindowClause); err != nil {
		return nil, nil, err
	}
	// Bind everything above the aggregation once to collect its calls;
	// the caller binds them again, finding the calls registered.
	for _, n := range s.TargetList {
		v := n.GetResTarget().Val
		if cr := v.GetColumnRef(); cr != nil && isStar(cr) {
			qual, _, _ := columnName(cr)
			if _, err := q.star(b, qual, cr.Location); err != nil {
				return nil, nil, err
			}
			continue
		}
		if _, err := b.bind(v); err != nil {
			return nil, nil, err
		}
	}
	if s.HavingClause != nil {
		if _, err := b.bind(s.HavingClause); err != nil {
			return nil, nil, err
		}
	}
	for _, n := range s.SortClause {
		_, _ = b.bind(n.GetSortBy().Node)
	}
	r := q.aggNode(from, sc)
	width := len(r.cols)
	r, err := q.attachScalars(r, scalarSubLinks(slices.Concat(s.TargetList, []*pg_query.Node{s.HavingClause}, sorts)...), false)
	if err != nil {
		return nil, nil, err
	}
	sc.extra = colTypes(r.cols[width:])
	if s.HavingClause != nil {
		var err error
		if r, err = q.filter(b, r, s.HavingClause, "HAVING"); err != nil {
			return nil, nil, err
		}
	}
	return r, b, nil
}

func isStar(c *pg_query.ColumnRef) bool {
	_, _, star := columnName(c)
	return star
}

// groupExpr binds one GROUP BY item: an expression, an output column
// position or an output column name.
func (q *query) groupExpr(b *binder, g *pg_query.Node, targets []*pg_query.Node) (typed, error) {
	if gs := g.GetGroupingSet(); gs != nil {
		return typed{}, errAt(q.st, sqlerr.FeatureNotSupported, gs.Location, "GROUPING SETS, ROLLUP and CUBE are not supported")
	}
	if c := g.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok {
			if iv.Ival.Ival < 1 || int(iv.Ival.Ival) > len(targets) {
				return typed{}, errAt(q.st, sqlerr.InvalidColumnReference, c.Location, "GROUP BY position %d is not in select list", iv.Ival.Ival)
			}
			return b.bind(targets[iv.Ival.Ival-1].GetResTarget().Val)
		}
	}
	t, err := b.bind(g)
	if err == nil {
		return t, nil
	}
	if cr := g.GetColumnRef(); cr != nil && sqlerr.CodeOf(err) == sqlerr.UndefinedColumn {
		if qual, name, _ := columnName(cr); qual == "" {
			for _, n := range targets {
				if rt := n.GetResTarget(); rt.Name == name {
					return b.bind(rt.Val)
				}
			}
		}
	}
	return typed{}, err
}

// aggNode builds the projection feeding the aggregation (group keys, then
// each call's arguments, filter and ordering columns) and the Agg node.
func (q *query) aggNode(from *relExpr, sc *aggScope) *relExpr {
	var outs []outCol
	col := func(t typed) int {
		for i, o := range outs {
			if descEqual(o.t.d, t.d) {
				return i
			}
		}
		outs = append(outs, outCol{t: t, name: "_agg_in", hidden: true})
		return len(outs) - 1
	}
	for _, g := range sc.groups {
		outs = append(outs, outCol{t: g, name: "_group", hidden: true})
	}
	var calls []plan.AggCall
	for _, c := range sc.calls {
		pc := plan.AggCall{Kind: c.kind, Distinct: c.distinct, Type: c.typ}
		for i, o := range c.order {
			pc.OrderBy = append(pc.OrderBy, plan.ColumnOrder{Column: col(o), Order: c.orders[i]})
		}
		for _, a := range c.args {
			pc.Args = append(pc.Args, col(a))
		}
		if c.filter != nil {
			f := expr.Input(col(*c.filter), types.TBool)
			pc.Filter = &f
		}
		calls = append(calls, pc)
	}
	in := q.project(from, outs, true)
	groups := seq(len(sc.groups))
	kind := plan.KindHashAgg
	if len(groups) == 0 {
		kind = plan.KindSimpleAgg
	}
	res := aggTables(in.node.Schema, groups, calls)
	out := &relExpr{}
	for _, g := range sc.groups {
		c := column{name: "?column?", typ: g.t}
		if g.d.Kind == expr.KindInput {
			src := from.cols[g.d.Index]
			c.qual, c.name = src.qual, src.name
		}
		out.cols = append(out.cols, c)
	}
	for _, c := range sc.calls {
		out.cols = append(out.cols, column{name: string(c.kind), typ: c.typ})
	}
	out.node = &plan.Node{Kind: kind, Inputs: []*plan.Node{in.node}, Schema: colTypes(out.cols), StreamKey: groups,
		Agg: &plan.Agg{GroupKeys: groups, Calls: calls, ResultTable: res}}
	return out
}
