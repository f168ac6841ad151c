package planner

import (
	"context"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// CreateSink is CREATE SINK: a view's spec (the query planned as a view's
// is) and the sink's connector.
type CreateSink struct {
	Spec        engine.SinkSpec
	IfNotExists bool
}

func (*CreateSink) isResult() {}

// PlanSink plans CREATE SINK (st.Kind == parser.KindCreateSink): the
// query of its AS form, or every column of the relation of its FROM form.
// A sink's rows leave in its query's column order, visible columns first
// (any hidden key columns after them).
func (p *Planner) PlanSink(ctx context.Context, st *parser.Statement) (Result, error) {
	if st.Kind != parser.KindCreateSink {
		return nil, sqlerr.Errorf(sqlerr.Internal, "planner: %s is not CREATE SINK", st.Kind)
	}
	p.reads = nil
	conn, err := sinkConnector(st)
	if err != nil {
		return nil, err
	}
	sel := st.Node.GetSelectStmt()
	if st.SinkFrom != "" {
		sel = &pg_query.SelectStmt{
			TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(
				pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeAStarNode()}, -1), -1)},
			FromClause: []*pg_query.Node{pg_query.MakeSimpleRangeVarNode(st.SinkFrom, -1)},
			Op:         pg_query.SetOperation_SETOP_NONE,
		}
	}
	if sel == nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a sink must be defined by a SELECT or FROM a relation")
	}
	q := &query{p: p, st: st, streaming: true}
	r, _, err := q.selectStmt(sel, true)
	if err != nil {
		return nil, err
	}
	cols, err := viewColumns(r)
	if err != nil {
		return nil, err
	}
	r = q.visibleFirst(r)
	if err := q.streamingPlan(ctx, r, false); err != nil {
		return nil, err
	}
	spec := engine.SinkSpec{Connector: *conn, ViewSpec: engine.ViewSpec{Name: st.Name, Columns: cols, Plan: r.node,
		PK: slices.Clone(r.node.StreamKey), DependsOn: q.deps, Definition: st.SQL()}}
	return &CreateSink{Spec: spec, IfNotExists: st.IfNotExists}, nil
}

// sinkConnector reads a CREATE SINK's WITH options: the connector and
// the rest, which connector.OpenSink checks. A FORMAT clause is refused:
// no sink connector yet encodes its rows.
func sinkConnector(st *parser.Statement) (*connector.SinkSpec, error) {
	spec := &connector.SinkSpec{}
	found := false
	for _, o := range st.With {
		name := strings.ToLower(o.Name)
		if _, dup := spec.Options[name]; dup || (name == "connector" && found) {
			return nil, optionErr(st, o, sqlerr.Code("42710"), "option %q specified more than once", o.Name)
		}
		if name == "connector" {
			spec.Connector, found = strings.ToLower(o.Value), true
			continue
		}
		if spec.Options == nil {
			spec.Options = map[string]string{}
		}
		spec.Options[name] = o.Value
	}
	if !found {
		return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "a sink needs the option connector; the sink connectors are %s",
			strings.Join(connector.SinkNames(), ", "))
	}
	if st.Format != "" {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "FORMAT %s ENCODE %s is not supported for sink connector %s: it encodes nothing",
			st.Format, st.Encode, spec.Connector)
	}
	return spec, nil
}
