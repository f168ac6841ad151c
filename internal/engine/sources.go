package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/types"
)

// SourceSpec describes a source to create.
type SourceSpec struct {
	Name string
	// Columns are the declared columns; a hidden _row_id is added.
	Columns    []catalog.Column
	Connector  connector.Spec
	Watermark  *catalog.Watermark
	Definition string
	Owner      string
}

// CreateSource records a source. A source has no job and stores nothing:
// every job that reads it runs a connector source of its own (ConnectorNode),
// with its own offsets, so one stuck job holds back no other.
func (e *Engine) CreateSource(ctx context.Context, spec SourceSpec) (_ *catalog.Relation, err error) {
	defer e.ddl.observe("create_source", time.Now(), &err)
	if err := e.checkName(spec.Name); err != nil {
		return nil, err
	}
	conn := spec.Connector
	conn.RowID = true
	if _, err := connector.Open(conn); err != nil {
		return nil, err
	}
	cols := append([]catalog.Column(nil), spec.Columns...)
	cols = append(cols, catalog.Column{Name: RowIDColumn, Type: types.TInt64, Hidden: true})
	ids, err := e.IDs(ctx, 1)
	if err != nil {
		return nil, err
	}
	rel := &catalog.Relation{ID: ids.Next(), Name: spec.Name, Kind: catalog.KindSource, State: catalog.StateCreated,
		Columns: cols, PK: []int{len(cols) - 1}, AppendOnly: true, Definition: spec.Definition, Owner: spec.Owner,
		Connector: &conn, Watermark: spec.Watermark}
	if err := e.catalog.Put(ctx, rel); err != nil {
		return nil, err
	}
	return rel, nil
}

// ConnectorNode is the plan node reading source rel (all its columns,
// _row_id last), under its watermark filter if it has a watermark. Its
// tables have id 0 until the planner assigns ids.
func ConnectorNode(rel *catalog.Relation) (*plan.Node, error) {
	if rel.Connector == nil {
		return nil, fmt.Errorf("engine: %s has no connector", rel.Name)
	}
	n, err := connectorNode(rel.Name, *rel.Connector, columnTypes(rel.Columns), rel.PK, 0)
	if err != nil {
		return nil, err
	}
	return withWatermark(rel, n, nil), nil
}

// withWatermark puts rel's watermark filter, if it has one, over in; its
// table takes an id of ids (nil: id 0, assigned later by the planner).
func withWatermark(rel *catalog.Relation, in *plan.Node, ids *IDBlock) *plan.Node {
	w := rel.Watermark
	if w == nil {
		return in
	}
	var tableID uint32
	if ids != nil {
		tableID = ids.Next()
	}
	n := &plan.Node{Kind: plan.KindWatermarkFilter, Inputs: []*plan.Node{in}, Schema: in.Schema, StreamKey: in.StreamKey,
		WatermarkFilter: &plan.WatermarkFilter{Col: w.Col, Expr: w.Expr, Table: plan.WatermarkTable(tableID, in.Schema[w.Col])}}
	plan.DeriveStreamProps(n)
	return n
}

func connectorNode(name string, spec connector.Spec, ts []types.Type, key []int, offsetID uint32) (*plan.Node, error) {
	src, err := connector.Open(spec)
	if err != nil {
		return nil, err
	}
	return &plan.Node{Kind: plan.KindConnectorSource, Schema: ts, StreamKey: append([]int(nil), key...),
		Connector: &plan.ConnectorSource{Name: name, Spec: spec, Splits: src.Splits(),
			OffsetTable: source.ConnectorOffsetTable(offsetID)}}, nil
}

// connectorInput is the input of a table fed by a connector: the
// connector's rows, and with a primary key also the table's DML (a union:
// DML and connector rows upsert the same keys). Without a key the table
// takes no DML (its row ids come from the connector).
func (e *Engine) connectorInput(rel *catalog.Relation, spec connector.Spec, ids *IDBlock) (*plan.Node, error) {
	rel.Connector = &spec
	conn, err := connectorNode(rel.Name, spec, rel.Table.Types, rel.PK, ids.Next())
	if err != nil {
		return nil, err
	}
	if hasRowID(rel) {
		return conn, nil
	}
	dml := &plan.Node{Kind: plan.KindTableSource, Schema: rel.Table.Types, StreamKey: rel.PK,
		TableSource: &plan.TableSource{TableID: rel.Table.ID, OffsetTable: source.OffsetTable(ids.Next())}}
	return &plan.Node{Kind: plan.KindUnion, Inputs: []*plan.Node{dml, conn}, Schema: rel.Table.Types, StreamKey: rel.PK}, nil
}

// SourceProgress is how far one job's connector source has read, as of
// the last committed epoch: the committed offsets summed over its splits,
// and their ends when every split has one (Bounded).
type SourceProgress struct {
	Job     uint32
	Source  string
	Offset  int64
	End     int64
	Bounded bool
}

// Done reports a bounded source read to its end.
func (p SourceProgress) Done() bool { return p.Bounded && p.Offset >= p.End }

// SourceProgress reports every connector source of every live job, from
// one committed snapshot.
func (e *Engine) SourceProgress(ctx context.Context) ([]SourceProgress, error) {
	sn, err := e.store.Snapshot()
	if err != nil {
		return nil, err
	}
	defer sn.Close()
	var out []SourceProgress
	for _, r := range e.catalog.All() {
		if r.Job.Plan == nil || r.State == catalog.StateDropping {
			continue
		}
		for _, f := range r.Job.Plan.Fragments {
			for _, n := range connectorNodes(f.Root) {
				p, err := sourceProgress(ctx, sn, n)
				if err != nil {
					return nil, err
				}
				p.Job = r.ID
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func connectorNodes(n *plan.Node) []*plan.ConnectorSource {
	if n == nil {
		return nil
	}
	var out []*plan.ConnectorSource
	if n.Connector != nil {
		out = append(out, n.Connector)
	}
	for _, in := range n.Inputs {
		out = append(out, connectorNodes(in)...)
	}
	return out
}

func sourceProgress(ctx context.Context, sn *storage.Snapshot, cs *plan.ConnectorSource) (SourceProgress, error) {
	p := SourceProgress{Source: cs.Name, Bounded: true}
	src, err := connector.Open(cs.Spec)
	if err != nil {
		return p, err
	}
	for split := range cs.Splits {
		row, ok, err := sn.Get(ctx, storage.TableDesc(cs.OffsetTable), types.Row{int64(split)})
		if err != nil {
			return p, err
		}
		if ok && len(row) == 2 {
			if off, isInt := row[1].(int64); isInt {
				p.Offset += off
			}
		}
		end, bounded := src.End(split)
		p.End += end
		p.Bounded = p.Bounded && bounded
	}
	return p, nil
}
