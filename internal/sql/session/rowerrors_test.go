package session

import (
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
)

// TestStreamingRowErrorsBecomeNull: inside a streaming job a row-level
// error — division by zero, a bad cast — yields NULL for that row (in a
// projection, a filter and an aggregate argument), the job keeps running,
// and every such error is counted once in the engine's row-error counter
// (sluice_stream_row_errors_total), retractions included.
func TestStreamingRowErrorsBecomeNull(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, x int, s varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW p AS SELECT id, 10 / x AS q, s::int AS n FROM t")
	exec(t, c, "CREATE MATERIALIZED VIEW f AS SELECT id FROM t WHERE 10 / x > 1")
	exec(t, c, "CREATE MATERIALIZED VIEW a AS SELECT count(*) AS c, sum(10 / x) AS total FROM t")
	before := p.Engine.RowErrors()

	exec(t, c, "INSERT INTO t VALUES (1, 2, '5'), (2, 0, 'abc'), (3, 5, '7'), (4, 0, '8')")
	exec(t, c, "FLUSH")
	wantRows(t, c, "SELECT id, q, n FROM p ORDER BY id", "1 5 5", "2 NULL NULL", "3 2 7", "4 NULL 8")
	wantRows(t, c, "SELECT id FROM f ORDER BY id", "1", "3")
	wantRows(t, c, "SELECT c, total FROM a", "4 7")
	// p: row 2 has two errors, row 4 one; f: rows 2 and 4; a: rows 2 and 4.
	if got := p.Engine.RowErrors() - before; got != 7 {
		t.Fatalf("row errors after insert = %d, want 7", got)
	}
	for view, want := range map[string]float64{"p": 3, "f": 2, "a": 2} {
		if got := jobRowErrors(t, p, view); got != want {
			t.Errorf("sluice_job_row_errors_total of %s = %v, want %v", view, got, want)
		}
	}

	// The delete of row 2 is evaluated again on its way to each view: the
	// retraction carries the same NULLs, so the views drop the row exactly.
	exec(t, c, "DELETE FROM t WHERE id = 2")
	exec(t, c, "INSERT INTO t VALUES (5, 1, '9')")
	exec(t, c, "FLUSH")
	wantRows(t, c, "SELECT id, q, n FROM p ORDER BY id", "1 5 5", "3 2 7", "4 NULL 8", "5 10 9")
	wantRows(t, c, "SELECT id FROM f ORDER BY id", "1", "3", "5")
	wantRows(t, c, "SELECT c, total FROM a", "4 17")
	if got := p.Engine.RowErrors() - before; got != 11 {
		t.Fatalf("row errors after delete = %d, want 11", got)
	}

	// A batch query is strict: the same expression is an error there.
	if _, err := c.Exec(t.Context(), "SELECT 10 / x FROM t"); err == nil {
		t.Fatal("batch SELECT 10 / x over a zero: no error")
	}
}

func wantRows(t *testing.T, c *pgx.Conn, sql string, want ...string) {
	t.Helper()
	if got := queryStrings(t, c, sql); !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", sql, got, want)
	}
}

// jobRowErrors scrapes sluice_job_row_errors_total of view's job.
func jobRowErrors(t *testing.T, p *Playground, view string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := p.Engine.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "sluice_job_row_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == view {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
