package session

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgcatalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// resultColumns describes the rows a planned statement sends (a query's,
// a RETURNING list's), nil when it sends none.
func resultColumns(res planner.Result) []pgwire.Column {
	return wireColumns(planner.ResultColumns(res))
}

// wireColumns describes catalog columns to the client.
func wireColumns(rc []catalog.Column) []pgwire.Column {
	if rc == nil {
		return nil
	}
	cols := make([]pgwire.Column, len(rc))
	for i, c := range rc {
		cols[i] = pgwire.Column{Name: c.Name, Type: c.Type}
	}
	return cols
}

// query runs a batch SELECT over the latest committed snapshot and streams
// its rows to w.
func (s *Session) query(ctx context.Context, q *planner.Query, w pgwire.ResultWriter, describe bool) error {
	if describe {
		if err := w.Describe(resultColumns(q)); err != nil {
			return err
		}
	}
	if err := s.waitOwnWrites(ctx, q, w); err != nil {
		return err
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

// runBatch executes q on one snapshot of the latest state, passing each
// visible row to out: tables hold every write acknowledged before the
// statement started (synced, so nothing read can be lost), views are as of
// the committed epoch.
func (s *Session) runBatch(ctx context.Context, q *planner.Query, out batch.RowFunc) error {
	sn, err := s.e.LatestSnapshot(ctx, true)
	if err != nil {
		return err
	}
	defer sn.Close()
	if err := s.overlayOwnWrites(sn); err != nil {
		return err
	}
	return s.runBatchOn(ctx, sn, q, out)
}

func (s *Session) runBatchOn(ctx context.Context, r batch.Reader, q *planner.Query, out batch.RowFunc) error {
	bq := batch.Query{Plan: q.Plan, Visible: len(q.Columns), OrderBy: q.OrderBy, Limit: q.Limit, Offset: q.Offset}
	sys := s.sysView()
	return batch.Run(ctx, r, bq, batch.Options{ChunkSize: s.h.cfg.ChunkSize, Now: s.now(),
		MemoryLimit: s.memoryLimit(), Pool: s.h.cfg.QueryPool, SpillDir: os.TempDir(),
		System: sys, Session: pgcatalog.Funcs{Src: sys}}, out)
}

// waitOwnWrites makes a SELECT of a view include this session's writes to
// the tables under it: tables are read at their latest state anyway, but a
// view holds what the committed epoch holds, so the statement waits for an
// epoch that covers the writes (a barrier is asked for at once) and says
// so in a NOTICE. statement_timeout and cancellation end the wait.
func (s *Session) waitOwnWrites(ctx context.Context, q *planner.Query, w pgwire.ResultWriter) error {
	if len(s.written) == 0 {
		return nil
	}
	var views []uint32
	for _, id := range s.e.RelationsOfTables(plan.ScannedTables(q.Plan)) {
		if r, ok := s.e.Catalog().ByID(id); ok && r.Kind != catalog.KindTable {
			views = append(views, id)
		}
	}
	if len(views) == 0 {
		return nil
	}
	start := time.Now()
	epoch, lagging, err := s.e.WaitCovered(ctx, s.written, views)
	if err != nil || epoch == 0 {
		return err
	}
	msg := fmt.Sprintf("waited %d ms for epoch %d, the first to include this session's writes in the views read",
		time.Since(start).Milliseconds(), epoch)
	if len(lagging) > 0 {
		msg = fmt.Sprintf("waited %d ms for epoch %d, but the views read do not include this session's latest writes to %s yet: its streaming job is paused or rate-limited",
			time.Since(start).Milliseconds(), epoch, strings.Join(lagging, ", "))
	}
	return w.Notice(pgwire.Notice{Message: msg})
}

// latest returns a snapshot of the tables' latest state with the open
// block's own writes, for a statement that reads to write.
func (s *Session) latest(ctx context.Context) (*storage.Snapshot, error) {
	sn, err := s.e.LatestSnapshot(ctx, false)
	if err != nil {
		return nil, err
	}
	if err := s.overlayOwnWrites(sn); err != nil {
		_ = sn.Close()
		return nil, err
	}
	return sn, nil
}

// collectOn runs q over sn and returns every row (every column).
func (s *Session) collectOn(ctx context.Context, sn *storage.Snapshot, q *planner.Query) ([]types.Row, error) {
	var rows []types.Row
	err := s.runBatchOn(ctx, sn, q, func(r types.Row) error {
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

// showCreate answers SHOW CREATE TABLE | MATERIALIZED VIEW | SOURCE name:
// the statement as it was written, as RisingWave prints it (Name, Create
// Sql).
func (s *Session) showCreate(ctx context.Context, st *parser.Statement, w pgwire.ResultWriter) error {
	rel, ok := s.e.Catalog().ByName(st.Name)
	if !ok || rel.State == catalog.StateDropping {
		return errNoRelation(st.Name)
	}
	if string(rel.Kind) != string(st.Object) {
		return sqlerr.Errorf(sqlerr.WrongObjectType, "%q is a %s, not a %s", rel.Name, rel.Kind, st.Object)
	}
	return writeRows(ctx, w, textColumns("Name", "Create Sql"), []types.Row{{"public." + rel.Name, rel.Definition}})
}

// relations lists live relations of a kind ("" for all that hold or
// bring rows: not sinks, which, as in RisingWave, are not in pg_class),
// sorted by name.
func (s *Session) relations(kind catalog.Kind) []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range s.e.Catalog().All() {
		if r.State == catalog.StateDropping || (kind != "" && r.Kind != kind) || (kind == "" && r.Kind == catalog.KindSink) {
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
