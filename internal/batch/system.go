package batch

import (
	"context"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// SystemRows produces the rows of a system relation (sluice_catalog.*,
// pg_catalog.*, information_schema.*) when a query reads it. The session
// implements it.
type SystemRows interface {
	SystemRows(ctx context.Context, schema, relation string) ([]types.Row, error)
}

// systemScan emits the rows of a system relation. A query reads each
// relation once (a self-join sees one set of rows, as a table scan sees
// one snapshot); the rows are counted against the query's memory.
func (x *executor) systemScan(ctx context.Context, n *plan.Node, emit emitFunc) error {
	rows, err := x.systemRows(ctx, n.SystemScan)
	if err != nil {
		return err
	}
	bld := types.NewBuilder(n.Schema, x.size)
	for _, r := range rows {
		if err := send(ctx, emit, bld.Append(types.Insert, r)); err != nil {
			return err
		}
	}
	return send(ctx, emit, bld.Take())
}

// systemRows reads s's rows from the provider, once per query.
func (x *executor) systemRows(ctx context.Context, s *plan.SystemScan) ([]types.Row, error) {
	if s == nil {
		return nil, sqlerr.New(sqlerr.Internal, "batch: malformed system_scan node")
	}
	key := s.Schema + "." + s.Relation
	if rows, ok := x.system[key]; ok {
		return rows, nil
	}
	if x.provider == nil {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "relation %s.%s cannot be read here", s.Schema, s.Relation)
	}
	rows, err := x.provider.SystemRows(ctx, s.Schema, s.Relation)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		// Kept for the whole query, so counted by its own executor.
		if err := x.rootExecutor().keepRow(r); err != nil {
			return nil, err
		}
	}
	if x.system == nil {
		x.system = map[string][]types.Row{}
	}
	x.system[key] = rows
	return rows, nil
}
