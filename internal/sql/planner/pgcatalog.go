package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/pgcatalog"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Postgres's catalogs (pg_catalog, information_schema; package pgcatalog)
// are bound like sluice_catalog: a system scan whose rows the session
// produces when the query runs. pg_catalog precedes every schema in the
// search path, so an unqualified pg_class is pg_catalog's even if a table
// has that name. Reading them or calling a session function
// (current_user, format_type, …) in a streaming job is refused: neither
// is a stream of changes.

// pgCatalogRelation finds the Postgres catalog relation rv names, if any.
func pgCatalogRelation(rv *pg_query.RangeVar) (*pgcatalog.Relation, bool, error) {
	if !pgcatalog.IsSchema(rv.Schemaname) && rv.Schemaname != "" {
		return nil, false, nil
	}
	r, ok := pgcatalog.Lookup(rv.Schemaname, rv.Relname)
	if !ok && rv.Schemaname != "" {
		return nil, false, sqlerr.Errorf(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", rv.Schemaname, rv.Relname)
	}
	return r, ok, nil
}

// pgCatalogScan binds relation r, qualified by qual.
func (q *query) pgCatalogScan(r *pgcatalog.Relation, loc int32, qual string) (*relExpr, error) {
	if q.streaming {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, loc,
			"a streaming job cannot read system relation %s.%s: it shows the catalog when queried, not a stream of changes",
			r.Schema, r.Name)
	}
	out := &relExpr{}
	for _, c := range r.Columns {
		out.cols = append(out.cols, column{qual: qual, name: c.Name, typ: c.Type})
	}
	if _, fn := pgcatalog.FunctionRelation(r.Name); !fn {
		// Every Postgres relation has the system column tableoid.
		out.cols = append(out.cols, column{qual: qual, name: "tableoid", typ: types.TInt64, hidden: true})
	}
	key := make([]int, len(r.Columns))
	for i := range key {
		key[i] = i
	}
	out.node = &plan.Node{Kind: plan.KindSystemScan, Schema: colTypes(out.cols), StreamKey: slices.Clone(key),
		SystemScan: &plan.SystemScan{Schema: r.Schema, Relation: r.Name}}
	return out, nil
}

// pgCatalogFunction binds a set-returning catalog function in FROM
// (pg_get_keywords(), pg_show_all_settings()); ok is false for others.
func (q *query) pgCatalogFunction(f *pg_query.RangeFunction, fc *pg_query.FuncCall) (*relExpr, bool, error) {
	r, ok := pgcatalog.FunctionRelation(funcName(fc))
	if !ok || len(fc.Args) > 0 {
		return nil, false, nil
	}
	qual := r.Name
	if f.Alias != nil {
		qual = f.Alias.Aliasname
	}
	out, err := q.pgCatalogScan(r, fc.Location, qual)
	if err != nil {
		return nil, true, err
	}
	return out, true, q.aliasColumns(out, f.Alias)
}

// refuseSessionFunc refuses a session function in a streaming job.
func (b *binder) refuseSessionFunc(name string, loc int32) error {
	if !b.q.streaming || !expr.IsSessionFunc(name) {
		return nil
	}
	return errAt(b.q.st, sqlerr.FeatureNotSupported, loc,
		"a streaming job cannot call %s(): its value belongs to a session, not to the rows", name)
}
