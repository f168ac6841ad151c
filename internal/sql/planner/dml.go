package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Insert is INSERT INTO Table. Either Rows (VALUES of constants, already
// evaluated) or Query (whose output is the new rows) is set; either way a
// row has the table's visible columns in table order, NULL where the
// statement gave no value.
type Insert struct {
	Table *catalog.Relation
	Rows  []types.Row
	// Deferred, in a prepared statement's plan, holds the VALUES cells
	// (and defaults) that depend on its parameters or on the time it runs:
	// Bind evaluates them into a copy of Rows at each execution.
	Deferred []Cell
	Query    *Query
	// OnConflict is the ON CONFLICT clause, nil without one.
	OnConflict *OnConflict
	// Returning is the RETURNING list, nil without one.
	Returning *Returning
}

// Update is UPDATE Table. Query's output is, per affected row, the old row
// (every column, hidden ones included) followed by the new row (the same
// layout, hidden columns copied from the old).
type Update struct {
	Table     *catalog.Relation
	Query     *Query
	Returning *Returning
}

// Delete is DELETE FROM Table. Query's output is the rows to delete, every
// column included.
type Delete struct {
	Table     *catalog.Relation
	Query     *Query
	Returning *Returning
}

// target finds the table a DML statement writes.
func (q *query) target(rv *pg_query.RangeVar, retract bool) (*catalog.Relation, error) {
	if err := q.refuseSystemTarget(rv); err != nil {
		return nil, err
	}
	rel, ok := q.p.cat.ByName(rv.Relname)
	if !ok {
		return nil, errAt(q.st, sqlerr.UndefinedTable, rv.Location, "relation %q does not exist", rv.Relname)
	}
	if rel.Kind != catalog.KindTable {
		return nil, errAt(q.st, sqlerr.WrongObjectType, rv.Location, "cannot change %s %q", rel.Kind, rv.Relname)
	}
	if err := rel.ConnectorOnlyError(); err != nil {
		return nil, withPos(q.st, err, rv.Location)
	}
	if retract && rel.AppendOnly {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, rv.Location, "append-only table does not support update or delete")
	}
	return rel, nil
}

func visibleColumns(rel *catalog.Relation) []int {
	var out []int
	for i, c := range rel.Columns {
		if !c.Hidden {
			out = append(out, i)
		}
	}
	return out
}

// assign converts a value written to column c (an assignment cast).
func (b *binder) assign(t typed, c catalog.Column, loc int32) (typed, error) {
	if t.t == c.Type {
		return t, nil
	}
	if t.t.ID == types.Unknown || expr.CanImplicitCast(t.t, c.Type) ||
		(t.t.IsNumeric() && c.Type.IsNumeric()) || c.Type.ID == types.Varchar {
		return b.coerce(t, c.Type, loc)
	}
	return typed{}, errAt(b.q.st, sqlerr.DatatypeMismatch, loc, "column %q is of type %s but expression is of type %s", c.Name, c.Type, t.t)
}

func (p *Planner) insert(st *parser.Statement, s *pg_query.InsertStmt, ps *paramSet) (Result, error) {
	q := &query{p: p, st: st, params: ps}
	if s.WithClause != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "INSERT … WITH is not supported")
	}
	rel, err := q.target(s.Relation, false)
	if err != nil {
		return nil, err
	}
	qual := rel.Name
	if s.Relation.Alias != nil {
		qual = s.Relation.Alias.Aliasname
	}
	oc, err := q.onConflict(rel, qual, s.OnConflictClause)
	if err != nil {
		return nil, err
	}
	ret, err := q.returning(rel, qual, true, s.ReturningList)
	if err != nil {
		return nil, err
	}
	res, err := q.insertSource(rel, s)
	if ins, ok := res.(*Insert); ok {
		ins.OnConflict, ins.Returning = oc, ret
	}
	return res, err
}

// insertSource plans where an INSERT's rows come from.
func (q *query) insertSource(rel *catalog.Relation, s *pg_query.InsertStmt) (Result, error) {
	targets, err := q.insertColumns(rel, s)
	if err != nil {
		return nil, err
	}
	ins := &insertTargets{cols: targets, names: s.Cols}
	sel := s.SelectStmt.GetSelectStmt()
	if sel == nil {
		return q.insertRows(rel, ins, nil)
	}
	if len(sel.ValuesLists) > 0 && sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.SortClause) == 0 && sel.LimitCount == nil {
		return q.insertRows(rel, ins, sel.ValuesLists)
	}
	return q.insertSelect(rel, ins, sel)
}

// insertTargets is the columns an INSERT writes: its column list, or
// (names empty) the table's visible columns in order.
type insertTargets struct {
	cols  []int
	names []*pg_query.Node
}

// fit checks that got values fill the targets and returns the columns
// they go to. Without a column list, as in Postgres, fewer values than
// columns fill the leading ones and the rest stay NULL. extra is the
// location of the first value beyond the targets, if any.
func (t *insertTargets) fit(q *query, got int, extra func(i int) int32) ([]int, error) {
	switch {
	case got > len(t.cols):
		return nil, errAt(q.st, sqlerr.SyntaxError, extra(len(t.cols)), "INSERT has more expressions than target columns")
	case got < len(t.cols) && len(t.names) > 0:
		return nil, errAt(q.st, sqlerr.SyntaxError, t.names[got].GetResTarget().Location, "INSERT has more target columns than expressions")
	}
	return t.cols[:got], nil
}

// insertColumns maps the statement's column list to table columns.
func (q *query) insertColumns(rel *catalog.Relation, s *pg_query.InsertStmt) ([]int, error) {
	if len(s.Cols) == 0 {
		return visibleColumns(rel), nil
	}
	var out []int
	for _, n := range s.Cols {
		rt := n.GetResTarget()
		i := slices.IndexFunc(rel.Columns, func(c catalog.Column) bool { return c.Name == rt.Name && !c.Hidden })
		if i < 0 {
			return nil, errAt(q.st, sqlerr.UndefinedColumn, rt.Location, "column %q of relation %q does not exist", rt.Name, rel.Name)
		}
		if slices.Contains(out, i) {
			return nil, errAt(q.st, sqlerr.Code("42701"), rt.Location, "column %q specified more than once", rt.Name)
		}
		out = append(out, i)
	}
	return out, nil
}

// insertRows evaluates constant VALUES rows strictly; an INSERT with no
// VALUES (DEFAULT VALUES) inserts one row of defaults.
func (q *query) insertRows(rel *catalog.Relation, ins *insertTargets, lists []*pg_query.Node) (Result, error) {
	b := &binder{q: q, clause: "VALUES"}
	vis := visibleColumns(rel)
	defs, err := q.bindDefaults(rel, vis)
	if err != nil {
		return nil, err
	}
	if lists == nil {
		row, given := make(types.Row, len(vis)), make([]bool, len(vis))
		err := q.fillDefaults(row, given, defs)
		return &Insert{Table: rel, Rows: []types.Row{row}, Deferred: q.deferDefaults(0, given, defs)}, err
	}
	first := lists[0].GetList().GetItems()
	targets, err := ins.fit(q, len(first), func(i int) int32 { return location(first[i]) })
	if err != nil {
		return nil, err
	}
	var rows []types.Row
	var cells []Cell
	for _, l := range lists {
		items := l.GetList().GetItems()
		if len(items) != len(first) {
			return nil, errAt(q.st, sqlerr.SyntaxError, location(items[0]), "VALUES lists must all be the same length")
		}
		row, given := make(types.Row, len(vis)), make([]bool, len(vis))
		for i, it := range items {
			if it.GetSetToDefault() != nil {
				continue
			}
			col := rel.Columns[targets[i]]
			t, err := b.bind(it)
			if err != nil {
				return nil, err
			}
			if t, err = b.assign(t, col, location(it)); err != nil {
				return nil, err
			}
			k := slices.Index(vis, targets[i])
			given[k] = true
			if q.deferred(t) {
				cells = append(cells, Cell{Row: len(rows), Col: k, Value: t.d, From: t.t, To: col.Type})
				continue
			}
			d, err := q.evalConst(t, col.Type)
			if err != nil {
				return nil, withPos(q.st, err, location(it))
			}
			row[k] = d
		}
		if err := q.fillDefaults(row, given, defs); err != nil {
			return nil, err
		}
		cells = append(cells, q.deferDefaults(len(rows), given, defs)...)
		rows = append(rows, row)
	}
	return &Insert{Table: rel, Rows: rows, Deferred: cells}, nil
}

func (q *query) insertSelect(rel *catalog.Relation, ins *insertTargets, sel *pg_query.SelectStmt) (Result, error) {
	r, ord, err := q.selectStmt(sel, true)
	if err != nil {
		return nil, err
	}
	if ord != nil && (ord.limit >= 0 || ord.offset > 0) {
		r = q.topN(r, ord.by, ord.limit, ord.offset)
	}
	src := r.visible()
	targets, err := ins.fit(q, len(src), func(int) int32 { return -1 })
	if err != nil {
		return nil, err
	}
	b := &binder{q: q, scope: r}
	var outs []outCol
	for _, ci := range visibleColumns(rel) {
		col := rel.Columns[ci]
		t, err := q.defaultOf(col)
		if err != nil {
			return nil, err
		}
		if k := slices.Index(targets, ci); k >= 0 {
			if t, err = b.assignSelected(r, src[k], col); err != nil {
				return nil, err
			}
		}
		outs = append(outs, outCol{t: t, name: col.Name})
	}
	if err := notQueryable(r.node); err != nil {
		return nil, err
	}
	return &Insert{Table: rel, Query: q.batchQuery(q.project(r, sortedBy(r, ord, outs), true), keptOrder(ord, len(outs)))}, nil
}

// sortedBy returns outs with the columns of r that ord sorts by appended,
// hidden, so that the INSERT's query keeps its ORDER BY: the rows are
// written in that order (which row ON CONFLICT DO NOTHING keeps of a key
// proposed twice, the order RETURNING sends). keptOrder is the ordering
// over them.
func sortedBy(r *relExpr, ord *ordering, outs []outCol) []outCol {
	if ord == nil {
		return outs
	}
	for _, o := range ord.by {
		c := r.cols[o.Column]
		outs = append(outs, outCol{t: typed{d: expr.Input(o.Column, c.typ), t: c.typ}, name: c.name, hidden: true})
	}
	return outs
}

func keptOrder(ord *ordering, from int) *ordering {
	if ord == nil {
		return nil
	}
	kept := &ordering{limit: -1}
	for k, o := range ord.by {
		o.Column = from + k
		kept.by = append(kept.by, o)
	}
	return kept
}

// assignSelected converts column i of an INSERT's SELECT to column c. A
// literal of no type ('2026-12-04 10:00:00', output as varchar) is read
// as c's type, as Postgres leaves the SELECT's unknowns to the INSERT:
// a cast of its text, which fails at run time on bad input (22P02) as
// Postgres's input function does.
func (b *binder) assignSelected(r *relExpr, i int, c catalog.Column) (typed, error) {
	rc := r.cols[i]
	t := typed{d: expr.Input(i, rc.typ), t: rc.typ}
	if rc.unknown {
		return b.coerce(t, c.Type, -1)
	}
	return b.assign(t, c, -1)
}

// scanTarget scans a DML target (every column), filtered by WHERE.
func (q *query) scanTarget(rel *catalog.Relation, alias *pg_query.Alias, where *pg_query.Node) (*relExpr, error) {
	qual := rel.Name
	if alias != nil {
		qual = alias.Aliasname
	}
	r, err := q.scanRelation(rel, qual)
	if err != nil {
		return nil, err
	}
	if where == nil {
		return r, nil
	}
	return q.filter(&binder{q: q, scope: r, clause: "WHERE"}, r, where, "WHERE")
}

// rawQuery describes a plan whose every column is output.
func rawQuery(r *relExpr) *Query {
	out := &Query{Plan: r.node, Limit: -1}
	for _, c := range r.cols {
		out.Columns = append(out.Columns, catalog.Column{Name: c.name, Type: c.typ, Hidden: c.hidden})
	}
	return out
}

func (p *Planner) delete(st *parser.Statement, s *pg_query.DeleteStmt, ps *paramSet) (Result, error) {
	q := &query{p: p, st: st, params: ps}
	if len(s.UsingClause) > 0 || s.WithClause != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DELETE … USING and WITH are not supported")
	}
	rel, r, err := q.changedRows(s.Relation, s.WhereClause)
	if err != nil {
		return nil, err
	}
	ret, err := q.returning(rel, qualOf(rel, s.Relation), false, s.ReturningList)
	if err != nil {
		return nil, err
	}
	return &Delete{Table: rel, Query: rawQuery(r), Returning: ret}, nil
}

// qualOf is the name that qualifies a DML target's columns.
func qualOf(rel *catalog.Relation, rv *pg_query.RangeVar) string {
	if rv.Alias != nil {
		return rv.Alias.Aliasname
	}
	return rel.Name
}

// changedRows resolves the table a DELETE or UPDATE changes and scans
// the rows its WHERE picks.
func (q *query) changedRows(rv *pg_query.RangeVar, where *pg_query.Node) (*catalog.Relation, *relExpr, error) {
	rel, err := q.target(rv, true)
	if err != nil {
		return nil, nil, err
	}
	r, err := q.scanTarget(rel, rv.Alias, where)
	return rel, r, err
}

func (p *Planner) update(st *parser.Statement, s *pg_query.UpdateStmt, ps *paramSet) (Result, error) {
	q := &query{p: p, st: st, params: ps}
	if len(s.FromClause) > 0 || s.WithClause != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "UPDATE … FROM and WITH are not supported")
	}
	rel, r, err := q.changedRows(s.Relation, s.WhereClause)
	if err != nil {
		return nil, err
	}
	b := &binder{q: q, scope: r, clause: "UPDATE"}
	newVals := make([]*typed, len(rel.Columns))
	for _, n := range s.TargetList {
		rt := n.GetResTarget()
		i := slices.IndexFunc(rel.Columns, func(c catalog.Column) bool { return c.Name == rt.Name && !c.Hidden })
		if i < 0 {
			return nil, errAt(st, sqlerr.UndefinedColumn, rt.Location, "column %q of relation %q does not exist", rt.Name, rel.Name)
		}
		if newVals[i] != nil {
			return nil, errAt(st, sqlerr.Code("42601"), rt.Location, "multiple assignments to same column %q", rt.Name)
		}
		val, err := q.assignedValue(rt.Val)
		if err != nil {
			return nil, err
		}
		t, err := q.defaultOf(rel.Columns[i])
		if err != nil {
			return nil, err
		}
		if val.GetSetToDefault() == nil {
			if t, err = b.bind(val); err != nil {
				return nil, err
			}
			if t, err = b.assign(t, rel.Columns[i], location(val)); err != nil {
				return nil, err
			}
		}
		newVals[i] = &t
	}
	var outs []outCol
	for i, c := range rel.Columns {
		outs = append(outs, outCol{t: typed{d: expr.Input(i, c.Type), t: c.Type}, name: c.Name, hidden: c.Hidden})
	}
	for i, c := range rel.Columns {
		t := typed{d: expr.Input(i, c.Type), t: c.Type}
		if newVals[i] != nil {
			t = *newVals[i]
		}
		outs = append(outs, outCol{t: t, name: c.Name, hidden: c.Hidden})
	}
	ret, err := q.returning(rel, qualOf(rel, s.Relation), false, s.ReturningList)
	if err != nil {
		return nil, err
	}
	return &Update{Table: rel, Query: rawQuery(q.project(r, outs, false)), Returning: ret}, nil
}

// assignedValue is the expression an UPDATE SET item assigns: its value,
// or for SET (a, b) = (x, y) the row item at the column's position.
func (q *query) assignedValue(n *pg_query.Node) (*pg_query.Node, error) {
	m := n.GetMultiAssignRef()
	if m == nil {
		return n, nil
	}
	row := m.Source.GetRowExpr()
	if row == nil {
		if m.Source.GetSubLink() != nil {
			return nil, errAt(q.st, sqlerr.FeatureNotSupported, location(m.Source), "UPDATE … SET (…) = (SELECT …) is not supported")
		}
		return nil, errAt(q.st, sqlerr.SyntaxError, location(m.Source), "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression")
	}
	if len(row.Args) != int(m.Ncolumns) {
		return nil, errAt(q.st, sqlerr.SyntaxError, row.Location, "number of columns does not match number of values")
	}
	return row.Args[m.Colno-1], nil
}

// bindDefaults binds, once per statement, the default of each visible
// column that has one (nil where the default is NULL).
func (q *query) bindDefaults(rel *catalog.Relation, vis []int) ([]*typed, error) {
	defs := make([]*typed, len(vis))
	for k, ci := range vis {
		if rel.Columns[ci].Default == "" {
			continue
		}
		t, err := q.defaultOf(rel.Columns[ci])
		if err != nil {
			return nil, err
		}
		defs[k] = &t
	}
	return defs, nil
}

// fillDefaults evaluates the defaults of the columns a VALUES row did not
// give, as Postgres does: only those, and once per row (a volatile
// default such as random() varies).
func (q *query) fillDefaults(row types.Row, given []bool, defs []*typed) error {
	for k, t := range defs {
		if t == nil || given[k] || q.deferred(*t) {
			continue
		}
		d, err := q.evalConst(*t, t.t)
		if err != nil {
			return err
		}
		row[k] = d
	}
	return nil
}
