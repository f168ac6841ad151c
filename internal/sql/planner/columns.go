package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// columnConstraint applies one column constraint of CREATE TABLE to col.
// It returns the constraint when it is a PRIMARY KEY (the caller checks
// there is one). Constraints Sluice cannot enforce are refused rather
// than accepted and ignored: a user relying on a CHECK that never runs
// is worse off than one told it is missing.
func (q *query) columnConstraint(col *catalog.Column, con *pg_query.Constraint) (pk bool, err error) {
	switch con.Contype {
	case pg_query.ConstrType_CONSTR_PRIMARY:
		col.NotNull = true
		return true, nil
	case pg_query.ConstrType_CONSTR_NOTNULL:
		col.NotNull = true
	case pg_query.ConstrType_CONSTR_NULL:
	case pg_query.ConstrType_CONSTR_DEFAULT:
		return false, q.setDefault(col, con)
	default:
		return false, unsupportedConstraint(q, con)
	}
	return false, nil
}

func unsupportedConstraint(q *query, con *pg_query.Constraint) error {
	kind := strings.TrimPrefix(con.Contype.String(), "CONSTR_")
	return errAt(q.st, sqlerr.FeatureNotSupported, con.Location,
		"%s constraints are not supported; Sluice enforces PRIMARY KEY (upsert), NOT NULL and DEFAULT", kind)
}

// setDefault checks a DEFAULT expression (no column references, a type
// assignable to the column, constant-evaluable) and keeps its text.
func (q *query) setDefault(col *catalog.Column, con *pg_query.Constraint) error {
	if _, err := q.bindDefault(*col, con.RawExpr); err != nil {
		return err
	}
	text, err := parser.DeparseExpr(con.RawExpr)
	if err != nil {
		return err
	}
	col.Default = text
	return nil
}

// bindDefault binds a default expression for col, with no columns in
// scope (Postgres: "cannot use column reference in DEFAULT expression").
func (q *query) bindDefault(col catalog.Column, n *pg_query.Node) (typed, error) {
	b := &binder{q: q, clause: "DEFAULT"}
	t, err := b.bind(n)
	if err != nil {
		return typed{}, err
	}
	return b.assign(t, col, location(n))
}

// defaultOf is the value an INSERT writes to a column it does not name,
// or to DEFAULT: the column's default expression, or NULL.
func (q *query) defaultOf(col catalog.Column) (typed, error) {
	if col.Default == "" {
		return typed{d: expr.Null(col.Type), t: col.Type}, nil
	}
	n, err := parser.ParseExpr(col.Default)
	if err != nil {
		return typed{}, err
	}
	t, err := q.bindDefault(col, n)
	if err != nil {
		return typed{}, sqlerr.Errorf(sqlerr.Code("42P17"), "default of column %q (%s) no longer binds: %v", col.Name, col.Default, err)
	}
	return t, nil
}
