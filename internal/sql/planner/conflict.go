package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// OnConflict is INSERT's ON CONFLICT clause. The only unique constraint a
// Sluice table has is its primary key, so that is what it arbitrates on.
type OnConflict struct {
	// DoNothing skips a proposed row whose key is taken.
	DoNothing bool
	// Set (DO UPDATE) holds, per table column, the new value's expression
	// over Input: the existing row (every column) followed by EXCLUDED, the
	// proposed row (every column). nil keeps the existing value.
	Set []*expr.Desc
	// Where, if set, must be true for the existing row to be updated.
	Where *expr.Desc
	Input []types.Type
}

// onConflict binds the clause for table rel (qual names the target in SET
// and WHERE; EXCLUDED names the proposed row).
func (q *query) onConflict(rel *catalog.Relation, qual string, c *pg_query.OnConflictClause) (*OnConflict, error) {
	if c == nil {
		return nil, nil
	}
	if err := q.conflictTarget(rel, c); err != nil {
		return nil, err
	}
	if c.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING {
		return &OnConflict{DoNothing: true}, nil
	}
	// EXCLUDED's columns are marked hidden so that an unqualified name
	// means the target's column, as in Postgres; excluded.v still resolves.
	scope := &relExpr{}
	for _, col := range rel.Columns {
		scope.cols = append(scope.cols, column{qual: qual, name: col.Name, typ: col.Type, hidden: col.Hidden})
	}
	for _, col := range rel.Columns {
		scope.cols = append(scope.cols, column{qual: "excluded", name: col.Name, typ: col.Type, hidden: true})
	}
	oc := &OnConflict{Set: make([]*expr.Desc, len(rel.Columns))}
	for _, col := range scope.cols {
		oc.Input = append(oc.Input, col.typ)
	}
	b := &binder{q: q, scope: scope, clause: "UPDATE"}
	for _, n := range c.TargetList {
		if err := q.conflictSet(b, rel, oc, n.GetResTarget()); err != nil {
			return nil, err
		}
	}
	if c.WhereClause != nil {
		t, err := (&binder{q: q, scope: scope, clause: "WHERE"}).bind(c.WhereClause)
		if err != nil {
			return nil, err
		}
		if t.t.ID != types.Bool && t.t.ID != types.Unknown {
			return nil, errAt(q.st, sqlerr.DatatypeMismatch, location(c.WhereClause), "argument of WHERE must be type boolean, not type %s", t.t)
		}
		d := t.d
		if t.t.ID == types.Unknown {
			d = expr.Cast(d, types.TBool)
		}
		oc.Where = &d
	}
	return oc, nil
}

// conflictTarget checks that ON CONFLICT names the primary key. DO NOTHING
// without a target needs no key, as in Postgres: into a table keyed by its
// hidden row id no row conflicts.
func (q *query) conflictTarget(rel *catalog.Relation, c *pg_query.OnConflictClause) error {
	if c.Infer == nil {
		if c.Action == pg_query.OnConflictAction_ONCONFLICT_UPDATE {
			return errAt(q.st, sqlerr.SyntaxError, c.Location, "ON CONFLICT DO UPDATE requires inference specification or constraint name")
		}
		return nil
	}
	if len(rel.PK) == 0 || slices.ContainsFunc(rel.PK, func(k int) bool { return rel.Columns[k].Hidden }) {
		return errAt(q.st, sqlerr.Code("42P10"), c.Location, "there is no unique or exclusion constraint matching the ON CONFLICT specification (table %q has no primary key)", rel.Name)
	}
	if c.Infer.Conname != "" {
		if c.Infer.Conname != rel.Name+"_pkey" {
			return errAt(q.st, sqlerr.Code("42704"), c.Infer.Location, "constraint %q for table %q does not exist", c.Infer.Conname, rel.Name)
		}
		return nil
	}
	var cols []int
	for _, n := range c.Infer.IndexElems {
		ie := n.GetIndexElem()
		i := slices.IndexFunc(rel.Columns, func(col catalog.Column) bool { return ie != nil && col.Name == ie.Name && !col.Hidden })
		if i < 0 {
			return errAt(q.st, sqlerr.Code("42P10"), c.Infer.Location, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
		}
		cols = append(cols, i)
	}
	pk := slices.Clone(rel.PK)
	slices.Sort(pk)
	slices.Sort(cols)
	if !slices.Equal(pk, cols) || c.Infer.WhereClause != nil {
		return errAt(q.st, sqlerr.Code("42P10"), c.Infer.Location, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
	}
	return nil
}

// conflictSet binds one DO UPDATE SET item.
func (q *query) conflictSet(b *binder, rel *catalog.Relation, oc *OnConflict, rt *pg_query.ResTarget) error {
	i := slices.IndexFunc(rel.Columns, func(c catalog.Column) bool { return c.Name == rt.Name && !c.Hidden })
	if i < 0 {
		return errAt(q.st, sqlerr.UndefinedColumn, rt.Location, "column %q of relation %q does not exist", rt.Name, rel.Name)
	}
	if oc.Set[i] != nil {
		return errAt(q.st, sqlerr.Code("42601"), rt.Location, "multiple assignments to same column %q", rt.Name)
	}
	if slices.Contains(rel.PK, i) {
		return errAt(q.st, sqlerr.FeatureNotSupported, rt.Location, "ON CONFLICT DO UPDATE cannot change primary key column %q", rt.Name)
	}
	val, err := q.assignedValue(rt.Val)
	if err != nil {
		return err
	}
	t, err := q.defaultOf(rel.Columns[i])
	if err != nil {
		return err
	}
	if val.GetSetToDefault() == nil {
		if t, err = b.bind(val); err != nil {
			return err
		}
		if t, err = b.assign(t, rel.Columns[i], location(val)); err != nil {
			return err
		}
	}
	oc.Set[i] = &t.d
	return nil
}
