package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
)

// TestUsers: with passwords required, a superuser creates users that log
// in with their own passwords (kept as SCRAM verifiers); a non-superuser
// cannot create, drop or promote users, nor run RECOVER, but changes its
// own password; pg_roles (psql's \du) lists them; a dropped user cannot
// log in.
func TestUsers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := engine.Open(ctx, engine.Options{InMemory: true, BarrierInterval: 5 * time.Millisecond, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Serve(ctx, e, ln, pgwire.Config{Users: map[string]string{"root": "rootpw"}}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	login := func(user, pw string) (*pgx.Conn, error) {
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/dev?sslmode=disable", user, pw, srv.Addr()))
		if err == nil {
			t.Cleanup(func() { c.Close(context.Background()) })
		}
		return c, err
	}
	wantLogin := func(user, pw, code string) *pgx.Conn {
		t.Helper()
		c, err := login(user, pw)
		var pe *pgconn.PgError
		switch {
		case code == "" && err != nil:
			t.Fatalf("%s/%s: %v", user, pw, err)
		case code != "" && (!errors.As(err, &pe) || pe.Code != code):
			t.Fatalf("%s/%s: %v, want %s", user, pw, err, code)
		}
		return c
	}
	root := wantLogin("root", "rootpw", "")
	exec(t, root, "CREATE USER alice WITH PASSWORD 'a1'")
	wantCode(t, root, "CREATE USER alice", "42710")
	wantCode(t, root, "CREATE ROLE x WITH REPLICATION", "0A000")
	alice := wantLogin("alice", "a1", "")
	wantLogin("alice", "nope", "28P01")
	wantLogin("mallory", "a1", "28P01")
	for _, sql := range []string{"CREATE USER bob", "DROP USER root", "ALTER USER alice SUPERUSER", "RECOVER", "ALTER SYSTEM SET work_mem = 1"} {
		wantCode(t, alice, sql, "42501")
	}
	exec(t, alice, "ALTER USER alice PASSWORD 'a2'")
	wantLogin("alice", "a1", "28P01")
	alice = wantLogin("alice", "a2", "")
	if got := queryStrings(t, root, "SELECT rolname, rolsuper FROM pg_roles ORDER BY rolname"); !slices.Equal(got, []string{"alice f", "root t"}) {
		t.Fatalf("pg_roles = %q", got)
	}
	exec(t, root, "ALTER USER alice SUPERUSER")
	exec(t, alice, "CREATE USER bob PASSWORD 'b'")
	wantCode(t, root, "DROP USER root", "55006")
	exec(t, root, "DROP USER alice, bob")
	exec(t, root, "DROP USER IF EXISTS alice")
	wantLogin("alice", "a2", "28P01")
}

// TestPrivileges: a user reads and changes only what it owns or was
// granted (SELECT to read, also into a view; INSERT, COPY, UPDATE,
// DELETE), only owners drop or pause, REVOKE holds for prepared
// statements, and PUBLIC grants to everyone.
func TestPrivileges(t *testing.T) {
	p := startPlayground(t)
	root := connect(t, p)
	exec(t, root, "CREATE USER alice")
	exec(t, root, "CREATE USER bob")
	exec(t, root, "CREATE TABLE t (id int PRIMARY KEY, v int)")
	exec(t, root, "INSERT INTO t VALUES (1, 10)")
	as := func(user string) *pgx.Conn {
		cfg, err := pgx.ParseConfig(p.Server.DSN())
		if err != nil {
			t.Fatal(err)
		}
		cfg.User = user
		c, err := pgx.ConnectConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	alice, bob := as("alice"), as("bob")
	for _, sql := range []string{"SELECT * FROM t", "INSERT INTO t VALUES (2, 20)", "UPDATE t SET v = 0",
		"DELETE FROM t", "DROP TABLE t", "CREATE MATERIALIZED VIEW av AS SELECT count(*) FROM t",
		"ALTER TABLE t PAUSE", "GRANT SELECT ON t TO alice"} {
		wantCode(t, alice, sql, "42501")
	}
	exec(t, root, "GRANT SELECT, INSERT ON t TO alice")
	if got := queryStrings(t, alice, "SELECT v FROM t"); !slices.Equal(got, []string{"10"}) {
		t.Fatalf("granted SELECT: %q", got)
	}
	exec(t, alice, "INSERT INTO t VALUES (2, 20)")
	wantCode(t, alice, "UPDATE t SET v = 0", "42501")
	// alice owns what she creates, and grants it on.
	exec(t, alice, "CREATE MATERIALIZED VIEW av AS SELECT count(*) AS n FROM t")
	wantCode(t, bob, "SELECT * FROM av", "42501")
	exec(t, alice, "GRANT SELECT ON av TO PUBLIC")
	if got := queryStrings(t, bob, "SELECT n FROM av"); len(got) != 1 {
		t.Fatalf("PUBLIC grant: %q", got)
	}
	wantCode(t, bob, "DROP MATERIALIZED VIEW av", "42501")
	// A prepared statement is checked at each execution.
	ctx := context.Background()
	if _, err := alice.Prepare(ctx, "q", "SELECT v FROM t WHERE id = $1"); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Exec(ctx, "q", 1); err != nil {
		t.Fatal(err)
	}
	exec(t, root, "REVOKE ALL ON t FROM alice")
	var pe *pgconn.PgError
	if _, err := alice.Exec(ctx, "q", 1); !errors.As(err, &pe) || pe.Code != "42501" {
		t.Fatalf("prepared after REVOKE: %v", err)
	}
	if pe := wantCode(t, root, "DROP USER alice", "2BP01"); pe.Detail != "owner of materialized view av" {
		t.Errorf("detail %q", pe.Detail)
	}
	exec(t, alice, "DROP MATERIALIZED VIEW av")
	exec(t, root, "DROP TABLE t")
	exec(t, root, "DROP USER alice")
}
