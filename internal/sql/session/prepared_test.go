package session

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// prepare prepares sql as name and checks the parameter OIDs the server
// inferred.
func prepare(t *testing.T, c *pgx.Conn, name, sql string, oids ...uint32) {
	t.Helper()
	sd, err := c.Prepare(context.Background(), name, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if !slices.Equal(sd.ParamOIDs, oids) {
		t.Fatalf("%s: parameter OIDs %v, want %v", sql, sd.ParamOIDs, oids)
	}
}

// TestPreparedPlannedOnce: the extended protocol's statements are planned
// when prepared, with their parameter types inferred by the planner, and
// executed many times without planning again.
func TestPreparedPlannedOnce(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (id bigint PRIMARY KEY, name varchar, score double precision, at timestamptz)")
	prepare(t, c, "ins", "INSERT INTO t VALUES ($1, $2, $3, $4)", 20, 1043, 701, 1184)
	prepare(t, c, "sel", "SELECT name, score FROM t WHERE id = $1", 20)
	prepare(t, c, "upd", "UPDATE t SET score = score + $2 WHERE id = $1", 20, 701)
	prepare(t, c, "cnt", "SELECT count(*) FROM t WHERE score > $1 AND name LIKE $2", 701, 1043)
	prepare(t, c, "ups", "INSERT INTO t (id, name) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = excluded.name || $3", 20, 1043, 1043)
	prepare(t, c, "arith", "SELECT $1::int + $2", 23, 23)
	prepare(t, c, "bare", "SELECT $1", 1043)

	before := p.Server.Planned()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 50 {
		if _, err := c.Exec(ctx, "ins", int64(i), "n", float64(i)/2, at); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if _, err := c.Exec(ctx, "upd", int64(i), 0.25); err != nil {
			t.Fatal(err)
		}
	}
	var name string
	var score float64
	if err := c.QueryRow(ctx, "sel", int64(3)).Scan(&name, &score); err != nil || name != "n" || score != 1.75 {
		t.Fatalf("sel 3: %q %v %v", name, score, err)
	}
	var n int64
	if err := c.QueryRow(ctx, "cnt", 20.0, "n%").Scan(&n); err != nil || n != 9 {
		t.Fatalf("cnt: %d %v", n, err)
	}
	if _, err := c.Exec(ctx, "ups", int64(3), "m", "!"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "sel", int64(3)).Scan(&name, &score); err != nil || name != "m!" {
		t.Fatalf("after upsert: %q %v", name, err)
	}
	var sum int32
	if err := c.QueryRow(ctx, "arith", 2, 3).Scan(&sum); err != nil || sum != 5 {
		t.Fatalf("arith: %d %v", sum, err)
	}
	var s string
	if err := c.QueryRow(ctx, "bare", "x").Scan(&s); err != nil || s != "x" {
		t.Fatalf("bare: %q %v", s, err)
	}
	if got := p.Server.Planned() - before; got != 0 {
		t.Fatalf("%d plans made while executing prepared statements, want 0", got)
	}
	wantRows(t, c, "SELECT count(*), sum(score) FROM t", "50 615")
}

// TestPreparedDefaultsPerExecution: a default such as now() is evaluated
// at each execution of a cached plan, not once when it was planned.
func TestPreparedDefaultsPerExecution(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE ev (id int, at timestamptz DEFAULT now())")
	prepare(t, c, "ins", "INSERT INTO ev (id) VALUES ($1)", 23)
	exec(t, c, "ins", 1)
	time.Sleep(20 * time.Millisecond)
	exec(t, c, "ins", 2)
	wantRows(t, c, "SELECT count(DISTINCT at) FROM ev", "2")
}

// TestPreparedReplansAfterDDL: a catalog change re-plans a cached
// statement; a change of its result type is refused, as in Postgres.
func TestPreparedReplansAfterDDL(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (id bigint PRIMARY KEY, name varchar)")
	exec(t, c, "INSERT INTO t VALUES (1, 'old')")
	prepare(t, c, "sel", "SELECT name FROM t WHERE id = $1", 20)
	exec(t, c, "DROP TABLE t")
	exec(t, c, "CREATE TABLE t (id bigint PRIMARY KEY, name varchar)")
	exec(t, c, "INSERT INTO t VALUES (1, 'new')")
	before := p.Server.Planned()
	var name string
	if err := c.QueryRow(ctx, "sel", int64(1)).Scan(&name); err != nil || name != "new" {
		t.Fatalf("after re-create: %q %v", name, err)
	}
	if got := p.Server.Planned() - before; got != 1 {
		t.Fatalf("%d plans, want 1 re-plan", got)
	}
	exec(t, c, "DROP TABLE t")
	exec(t, c, "CREATE TABLE t (id bigint PRIMARY KEY, name int)")
	wantExecCode(t, c, "0A000", "sel", int64(1))
	exec(t, c, "DROP TABLE t")
	wantExecCode(t, c, "42P01", "sel", int64(1))
}

func wantExecCode(t *testing.T, c *pgx.Conn, code, sql string, args ...any) {
	t.Helper()
	_, err := c.Exec(context.Background(), sql, args...)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("%s: want SQLSTATE %s, got %v", sql, code, err)
	}
}

// TestSQLPrepare: PREPARE, EXECUTE and DEALLOCATE in SQL.
func TestSQLPrepare(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id bigint PRIMARY KEY, name varchar)")
	wantTag(t, c, "PREPARE ins (bigint, varchar) AS INSERT INTO t (id, name) VALUES ($1, $2)", "PREPARE")
	wantTag(t, c, "EXECUTE ins (1, 'a')", "INSERT 0 1")
	wantTag(t, c, "EXECUTE ins (1 + 1, 'b' || 'c')", "INSERT 0 1")
	if pe := wantCode(t, c, "EXECUTE ins (3)", "42601"); pe.Detail != "Expected 2 parameters but got 1." {
		t.Fatalf("detail %q", pe.Detail)
	}
	wantCode(t, c, "PREPARE ins AS SELECT 1", "42P05")
	wantTag(t, c, "PREPARE q AS SELECT name FROM t WHERE id = $1", "PREPARE")
	wantRows(t, c, "EXECUTE q (2)", "bc")
	wantCode(t, c, "EXECUTE q ('x')", "22P02")
	wantTag(t, c, "DEALLOCATE q", "DEALLOCATE")
	wantCode(t, c, "EXECUTE q (1)", "26000")
	wantCode(t, c, "DEALLOCATE q", "26000")
	wantTag(t, c, "DEALLOCATE ALL", "DEALLOCATE ALL")
	wantCode(t, c, "EXECUTE ins (4, 'd')", "26000")
	wantCode(t, c, "SELECT name FROM t WHERE id = $1", "42P02")
	wantRows(t, c, "SELECT id, name FROM t ORDER BY id", "1 a", "2 bc")
}
