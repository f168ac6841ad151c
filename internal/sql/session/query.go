package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/types"
)

// columnsOf describes a query's visible result columns.
func columnsOf(q *planner.Query) []pgwire.Column {
	cols := make([]pgwire.Column, len(q.Columns))
	for i, c := range q.Columns {
		cols[i] = pgwire.Column{Name: c.Name, Type: c.Type}
	}
	return cols
}

// query runs a batch SELECT over the latest committed snapshot and streams
// its rows to w.
func (s *Session) query(ctx context.Context, q *planner.Query, w pgwire.ResultWriter, describe bool) error {
	if describe {
		if err := w.Describe(columnsOf(q)); err != nil {
			return err
		}
	}
	n := 0
	err := s.runBatch(ctx, q, func(row types.Row) error {
		n++
		return w.WriteRow(ctx, row)
	})
	if err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("SELECT %d", n))
}

// runBatch executes q on one snapshot, passing each visible row to out.
func (s *Session) runBatch(ctx context.Context, q *planner.Query, out batch.RowFunc) error {
	sn, err := s.e.Store().Snapshot()
	if err != nil {
		return err
	}
	defer sn.Close()
	bq := batch.Query{Plan: q.Plan, Visible: len(q.Columns), OrderBy: q.OrderBy, Limit: q.Limit, Offset: q.Offset}
	return batch.Run(ctx, sn, bq, batch.Options{ChunkSize: s.h.cfg.ChunkSize, Now: s.now()}, out)
}

// collect runs q and returns every row (every column, for DML).
func (s *Session) collect(ctx context.Context, q *planner.Query) ([]types.Row, error) {
	var rows []types.Row
	err := s.runBatch(ctx, q, func(r types.Row) error {
		rows = append(rows, r)
		return nil
	})
	return rows, err
}

// writeRows sends rows of one shape to w with a header.
func writeRows(ctx context.Context, w pgwire.ResultWriter, cols []pgwire.Column, rows []types.Row) error {
	if err := w.Describe(cols); err != nil {
		return err
	}
	for _, r := range rows {
		if err := w.WriteRow(ctx, r); err != nil {
			return err
		}
	}
	return w.Complete(fmt.Sprintf("SELECT %d", len(rows)))
}

func textColumns(names ...string) []pgwire.Column {
	cols := make([]pgwire.Column, len(names))
	for i, n := range names {
		cols[i] = pgwire.Column{Name: n, Type: types.TVarchar}
	}
	return cols
}

func upper(s string) string { return strings.ToUpper(s) }

// showRelations answers SHOW TABLES / SHOW MATERIALIZED VIEWS: one Name
// column, sorted, as RisingWave prints it.
func (s *Session) showRelations(ctx context.Context, kind catalog.Kind, w pgwire.ResultWriter) error {
	var rows []types.Row
	for _, r := range s.relations(kind) {
		rows = append(rows, types.Row{r.Name})
	}
	return writeRows(ctx, w, textColumns("Name"), rows)
}

// relations lists live relations of a kind ("" for all), sorted by name.
func (s *Session) relations(kind catalog.Kind) []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range s.e.Catalog().All() {
		if r.State == catalog.StateDropping || (kind != "" && r.Kind != kind) {
			continue
		}
		out = append(out, r)
	}
	sortRelations(out)
	return out
}

// describe answers DESCRIBE name: one row per visible column (Name,
// Type, Is Hidden, Description) then the primary key.
func (s *Session) describe(ctx context.Context, name string, w pgwire.ResultWriter) error {
	rel, ok := s.e.Catalog().ByName(name)
	if !ok {
		return errNoRelation(name)
	}
	var rows []types.Row
	for _, c := range rel.Columns {
		rows = append(rows, types.Row{c.Name, c.Type.String(), fmt.Sprint(c.Hidden), nil})
	}
	var pk []string
	for _, i := range rel.PK {
		pk = append(pk, rel.Columns[i].Name)
	}
	rows = append(rows, types.Row{"primary key", strings.Join(pk, ", "), nil, nil})
	return writeRows(ctx, w, textColumns("Name", "Type", "Is Hidden", "Description"), rows)
}
