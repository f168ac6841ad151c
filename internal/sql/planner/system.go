package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgcatalog"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// System relations (schema sluice_catalog, engine.SystemRelations) are
// bound like tables: a system scan leaf whose rows the engine produces
// when the batch query runs. Everyone may read them, as pg_catalog. They
// hold the engine's live state, not a stream of changes, so a streaming
// job cannot read them, and no statement can write them.

// isSystemSchema reports whether rv names a relation of sluice_catalog.
func isSystemSchema(rv *pg_query.RangeVar) bool { return rv.Schemaname == engine.SystemSchema }

// systemScan binds sluice_catalog.name, qualified by qual.
func (q *query) systemScan(rv *pg_query.RangeVar, qual string) (*relExpr, error) {
	rel, ok := engine.LookupSystemRelation(rv.Relname)
	if !ok {
		return nil, errAt(q.st, sqlerr.UndefinedTable, rv.Location, "relation \"%s.%s\" does not exist",
			engine.SystemSchema, rv.Relname)
	}
	if q.streaming {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, rv.Location,
			"a streaming job cannot read system relation %s.%s: it shows the engine's state when queried, not a stream of changes",
			engine.SystemSchema, rel.Name)
	}
	out := &relExpr{}
	for _, c := range rel.Columns {
		out.cols = append(out.cols, column{qual: qual, name: c.Name, typ: c.Type})
	}
	out.node = &plan.Node{Kind: plan.KindSystemScan, Schema: colTypes(out.cols), StreamKey: slices.Clone(rel.Key),
		SystemScan: &plan.SystemScan{Schema: engine.SystemSchema, Relation: rel.Name}}
	return out, nil
}

// refuseSystemTarget refuses a write to a system relation.
func (q *query) refuseSystemTarget(rv *pg_query.RangeVar) error {
	if _, ok, _ := pgCatalogRelation(rv); ok || pgcatalog.IsSchema(rv.Schemaname) {
		return errAt(q.st, sqlerr.WrongObjectType, rv.Location, "cannot change system relation %s", rv.Relname)
	}
	if !isSystemSchema(rv) {
		return nil
	}
	return errAt(q.st, sqlerr.WrongObjectType, rv.Location, "cannot change system relation %s.%s", engine.SystemSchema, rv.Relname)
}
