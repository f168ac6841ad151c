package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestViewFlow is the flow: tables, a view that backfills, DML
// with implicit_flush, SELECT from the view, DROP with dependents.
func TestViewFlow(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "SET RW_IMPLICIT_FLUSH TO true")
	if got := queryStrings(t, c, "SHOW implicit_flush"); !slices.Equal(got, []string{"true"}) {
		t.Fatalf("SHOW implicit_flush = %q", got)
	}
	exec(t, c, "CREATE TABLE orders (id int PRIMARY KEY, cust varchar, amount int)")
	exec(t, c, "INSERT INTO orders VALUES (1, 'ann', 10), (2, 'bob', 5), (3, 'ann', 7)")
	exec(t, c, "CREATE MATERIALIZED VIEW totals AS SELECT cust, sum(amount) AS total, count(*) AS n FROM orders GROUP BY cust")
	check := func(want ...string) {
		t.Helper()
		got := queryStrings(t, c, "SELECT * FROM totals ORDER BY cust")
		if !slices.Equal(got, want) {
			t.Fatalf("totals = %q, want %q", got, want)
		}
	}
	check("ann 17 2", "bob 5 1")
	if tag := exec(t, c, "UPDATE orders SET amount = amount + 1 WHERE cust = 'ann'"); tag.String() != "UPDATE 2" {
		t.Fatalf("tag %s", tag)
	}
	check("ann 19 2", "bob 5 1")
	if tag := exec(t, c, "DELETE FROM orders WHERE id = 2"); tag.String() != "DELETE 1" {
		t.Fatalf("tag %s", tag)
	}
	check("ann 19 2")
	exec(t, c, "INSERT INTO orders VALUES (1, 'cat', 1) ON CONFLICT (id) DO UPDATE SET cust = excluded.cust, amount = excluded.amount")
	check("ann 8 1", "cat 1 1")
	exec(t, c, "CREATE MATERIALIZED VIEW IF NOT EXISTS totals AS SELECT 1")
	wantCode(t, c, "DROP TABLE orders", "2BP01")
	exec(t, c, "DROP TABLE orders CASCADE")
	if got := queryStrings(t, c, "SHOW TABLES"); len(got) != 0 {
		t.Fatalf("tables left: %q", got)
	}
}

func wantCode(t *testing.T, c interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, sql, code string) *pgconn.PgError {
	t.Helper()
	_, err := c.Exec(context.Background(), sql)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("%s: want SQLSTATE %s, got %v", sql, code, err)
	}
	return pe
}

func TestErrors(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a int, b varchar)")
	exec(t, c, "INSERT INTO t VALUES (1, 'x'), (0, 'y')")
	exec(t, c, "FLUSH")
	cases := map[string]string{
		"SELEC 1":                       "42601",
		"SELECT * FROM nope":            "42P01",
		"SELECT nope FROM t":            "42703",
		"SELECT 10 / a FROM t":          "22012",
		"SELECT 1/0":                    "22012",
		"CREATE TABLE t (x int)":        "42P07",
		"INSERT INTO t VALUES ('z', 1)": "22P02",
		"SET no_such_thing = 1":         "42704",
		"SHOW no_such_thing":            "42704",
		"SET timezone = 'Europe/Paris'": "22023",
		"DROP MATERIALIZED VIEW t":      "42809",
		"DROP TABLE nope":               "42P01",
	}
	for sql, code := range cases {
		pe := wantCode(t, c, sql, code)
		if code == "42703" && pe.Position == 0 {
			t.Errorf("%s: no position", sql)
		}
	}
	// The connection is still usable, and nothing half-created remains.
	exec(t, c, "SET my.custom = 'x'")
	if got := queryStrings(t, c, "SHOW my.custom"); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("custom = %q", got)
	}
	if got := queryStrings(t, c, "SELECT a FROM t ORDER BY a"); !slices.Equal(got, []string{"0", "1"}) {
		t.Fatalf("got %q", got)
	}
}

func TestCancelReturns57014(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	fillBig(t, c)
	// A cross product large enough to run for a long time.
	start := time.Now()
	ctrlC(t, c, "SELECT count(*) FROM big x, big y, big z WHERE x.a + y.a + z.a > 0")
	if time.Since(start) > 10*time.Second {
		t.Fatalf("cancel took %s", time.Since(start))
	}
	if got := queryStrings(t, c, "SELECT count(*) FROM big"); !slices.Equal(got, []string{"640"}) {
		t.Fatalf("after cancel: %q", got)
	}
}

func TestStatementTimeout(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	fillBig(t, c)
	exec(t, c, "SET statement_timeout = 100")
	pe := wantCode(t, c, "SELECT count(*) FROM big x, big y, big z WHERE x.a + y.a + z.a > 0", "57014")
	if !strings.Contains(pe.Message, "timeout") {
		t.Fatalf("message %q", pe.Message)
	}
}

// psql's Ctrl-C on a foreground CREATE MATERIALIZED VIEW that waits for a
// slow (rate-limited) backfill: the statement ends with 57014, the job is
// gone from SHOW JOBS, the name is free, and the connection stays usable.
func TestCancelForegroundCreateOverPgwire(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (k int, v int)")
	// More rows than the throttle's burst (stream.Throttle lets a few
	// chunks pass at once), so the limit holds the backfill back.
	exec(t, c, "INSERT INTO t SELECT g, g FROM generate_series(1, 20000) AS g")
	exec(t, c, "FLUSH")
	exec(t, c, "SET backfill_rate_limit = 50")
	ctrlC(t, c, "CREATE MATERIALIZED VIEW slowmv AS SELECT k, count(*) AS n FROM t GROUP BY k")
	if jobs := queryStrings(t, c, "SHOW JOBS"); len(jobs) != 0 {
		t.Fatalf("SHOW JOBS after Ctrl-C = %q", jobs)
	}
	if got := queryStrings(t, c, "SHOW MATERIALIZED VIEWS"); slices.Contains(got, "slowmv") {
		t.Fatalf("slowmv survived Ctrl-C: %q", got)
	}
	exec(t, c, "SET backfill_rate_limit = DEFAULT")
	exec(t, c, "CREATE MATERIALIZED VIEW slowmv AS SELECT count(*) AS n FROM t")
	exec(t, c, "FLUSH")
	if got := queryStrings(t, c, "SELECT n FROM slowmv"); !slices.Equal(got, []string{"20000"}) {
		t.Fatalf("slowmv recreated = %q", got)
	}
}

// fillBig makes table big: 640 rows of 1, committed.
func fillBig(t *testing.T, c *pgx.Conn) {
	t.Helper()
	exec(t, c, "SET implicit_flush = on")
	exec(t, c, "CREATE TABLE big (a int)")
	exec(t, c, "INSERT INTO big SELECT 1 FROM (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) v(x)")
	for range 6 {
		exec(t, c, "INSERT INTO big SELECT a FROM big")
	}
	exec(t, c, "FLUSH")
}

// ctrlC runs sql and presses psql's Ctrl-C 300 ms in (a CancelRequest on
// a second connection); the statement must end with 57014.
func ctrlC(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	timer := time.AfterFunc(300*time.Millisecond, func() { _ = c.PgConn().CancelRequest(context.Background()) })
	defer timer.Stop()
	start := time.Now()
	_, err := c.Exec(context.Background(), sql)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		if err == nil || !strings.Contains(err.Error(), "57014") {
			t.Fatalf("%s after Ctrl-C: %v after %s, want 57014", sql, err, time.Since(start))
		}
	}
}
