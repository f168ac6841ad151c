package session

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestShowDescribeExplain(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE a (k int PRIMARY KEY, v int)")
	exec(t, c, "CREATE TABLE b (k int, w varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW j AS SELECT a.k, b.w FROM a JOIN b ON a.k = b.k")
	if got := queryStrings(t, c, "SHOW TABLES"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("SHOW TABLES = %q", got)
	}
	if got := queryStrings(t, c, "SHOW MATERIALIZED VIEWS"); !slices.Equal(got, []string{"j"}) {
		t.Fatalf("SHOW MATERIALIZED VIEWS = %q", got)
	}
	d := strings.Join(queryStrings(t, c, "DESCRIBE b"), "\n")
	if !strings.Contains(d, "w character varying false") || !strings.Contains(d, "_row_id bigint true") {
		t.Fatalf("DESCRIBE b:\n%s", d)
	}
	plan := strings.Join(queryStrings(t, c, "EXPLAIN CREATE MATERIALIZED VIEW j2 AS SELECT b.w, count(*) FROM a JOIN b ON a.k = b.k GROUP BY b.w"), "\n")
	for _, want := range []string{"Fragment", "parallelism", "dispatch hash", "HashJoin", "HashAgg", "Materialize", "Merge"} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, plan)
		}
	}
	if got := queryStrings(t, c, "SHOW TABLES"); len(got) != 2 {
		t.Fatalf("EXPLAIN created something: %q", got)
	}
	bp := strings.Join(queryStrings(t, c, "EXPLAIN SELECT k FROM a ORDER BY v LIMIT 3"), "\n")
	if !strings.Contains(bp, "limit: 3") || !strings.Contains(bp, "Backfill") {
		t.Fatalf("EXPLAIN SELECT:\n%s", bp)
	}
}

// TestTransactionsAndPrepared checks BEGIN/COMMIT reporting and that a
// prepared statement is described before it runs.
func TestTransactionsAndPrepared(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id bigint PRIMARY KEY, name varchar, score double precision)")
	ctx := context.Background()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.PgConn().TxStatus(); st != 'T' {
		t.Fatalf("tx status %c inside BEGIN", st)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO t VALUES ($1, $2, $3)", int64(1), "ann", 2.5); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.PgConn().TxStatus(); st != 'I' {
		t.Fatalf("tx status %c after COMMIT", st)
	}
	sd, err := c.Prepare(ctx, "q", "SELECT name, score FROM t WHERE id = $1")
	if err != nil {
		t.Fatal(err)
	}
	if len(sd.Fields) != 2 || sd.Fields[0].Name != "name" || len(sd.ParamOIDs) != 1 || sd.ParamOIDs[0] != 20 {
		t.Fatalf("description %+v", sd)
	}
	var name string
	var score float64
	if err := c.QueryRow(ctx, "q", int64(1)).Scan(&name, &score); err != nil || name != "ann" || score != 2.5 {
		t.Fatalf("got %q %v %v", name, score, err)
	}
	// A quote in a parameter stays data.
	if _, err := c.Exec(ctx, "INSERT INTO t (id, name) VALUES ($1, $2)", int64(2), "o'brien"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT name FROM t WHERE id = $1", int64(2)).Scan(&name); err != nil || name != "o'brien" {
		t.Fatalf("got %q %v", name, err)
	}
}
