package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/plan"
)

// SinkSpec describes a sink to create: its query, as a view's (the
// columns, the plan, its key and what it reads), and its connector.
type SinkSpec struct {
	ViewSpec
	Connector connector.SinkSpec
}

// CreateSink creates a sink: a job like a view's whose root writes to the
// sink connector instead of a table. Unless spec.Background it returns
// once the sink has caught up with its inputs' existing rows.
func (e *Engine) CreateSink(ctx context.Context, spec SinkSpec) (_ *catalog.Relation, err error) {
	defer e.ddl.observe("create_sink", time.Now(), &err)
	if err := e.checkName(spec.Name); err != nil {
		return nil, err
	}
	if spec.Plan == nil {
		return nil, fmt.Errorf("engine: sink %s has no plan", spec.Name)
	}
	conn := spec.Connector
	conn.Columns, conn.AppendOnly = sinkColumns(spec.Columns), spec.Plan.AppendOnly
	if _, err := connector.OpenSink(conn); err != nil {
		return nil, err
	}
	ids, err := e.IDs(ctx, 64+8*e.opts.Parallelism)
	if err != nil {
		return nil, err
	}
	rel := &catalog.Relation{ID: ids.Next(), Name: spec.Name, Kind: catalog.KindSink, Columns: spec.Columns,
		PK: spec.PK, AppendOnly: conn.AppendOnly, Definition: spec.Definition, DependsOn: spec.DependsOn,
		Owner: spec.Owner, Sink: &conn}
	if err := rateLimitOf(rel, spec.RateLimit); err != nil {
		return nil, err
	}
	if err := ampSettingsOf(rel, spec.AmpLimit, spec.AmpAction); err != nil {
		return nil, err
	}
	e.guard.watch(rel.ID, spec.Notices)
	return rel, e.createJob(ctx, rel, spec.Plan, ids, spec.Background)
}

// sinkColumns are the visible columns a sink writes; its rows carry
// any hidden key columns after them.
func sinkColumns(cols []catalog.Column) []connector.Column {
	var out []connector.Column
	for _, c := range cols {
		if !c.Hidden {
			out = append(out, connector.Column{Name: c.Name, Type: c.Type})
		}
	}
	return out
}

// jobRoot is the root of rel's job over input: a sink's connector, or
// the materialize into rel's table.
func jobRoot(rel *catalog.Relation, input *plan.Node) *plan.Node {
	if rel.Kind == catalog.KindSink {
		return plan.NewSink(input, rel.Name, *rel.Sink, rel.PK)
	}
	return &plan.Node{Kind: plan.KindMaterialize, Inputs: []*plan.Node{input}, Schema: rel.Table.Types,
		StreamKey: rel.PK, Materialize: &plan.Materialize{Table: rel.Table, View: rel.Kind == catalog.KindMaterializedView,
			FreshInserts:  rel.Kind == catalog.KindTable && hasRowID(rel) && rel.Connector == nil,
			CheckedWrites: checkedWrites(rel)}}
}
