package session

import (
	"context"
	"net"
	osexec "os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/testenv"
)

func hostPort(t *testing.T, p *Playground) (string, string) {
	t.Helper()
	h, port, err := net.SplitHostPort(p.Server.Addr())
	if err != nil {
		t.Fatal(err)
	}
	return h, port
}

// TestPsqlDescribe runs psql's \d family against the server.
func TestPsqlDescribe(t *testing.T) {
	testenv.LookPath(t, "psql", "apt-get install -y postgresql-client")
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE items (id int PRIMARY KEY, label varchar, price numeric)")
	exec(t, c, "CREATE MATERIALIZED VIEW cheap AS SELECT id, label FROM items WHERE price < 10")
	exec(t, c, "CREATE TABLE priced (id int, amount numeric(10,2) NOT NULL DEFAULT 0, code varchar(8) DEFAULT 'none', at timestamp(3))")
	host, port := hostPort(t, p)
	psql := func(cmd string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := osexec.CommandContext(ctx, "psql", "-X", "-h", host, "-p", port, "-U", "root", "-d", "dev", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("psql %s: %v\n%s", cmd, err, out)
		}
		return string(out)
	}
	checks := map[string][]string{
		`\d`:        {"items", "cheap", "materialized view", "table"},
		`\dt`:       {"items"},
		`\dm`:       {"cheap"},
		`\d items`:  {`Table "public.items"`, "id", "integer", "not null", "label", "character varying", "price", "numeric"},
		`\d cheap`:  {`Materialized view "public.cheap"`, "label"},
		`\d priced`: {"numeric(10,2)", "not null", "| 0", "character varying(8)", "| 'none'", "timestamp(3) without time zone"},
		// The rest run correlated subqueries, ARRAY(SELECT …) and
		// generate_series over outer columns: planned, not special-cased.
		`\d+ items`:              {`Table "public.items"`, "plain", "extended", "Access method: heap"},
		`\d+ cheap`:              {"View definition:", "SELECT id, label FROM items WHERE price < 10"},
		`\d sluice_catalog.jobs`: {`View "sluice_catalog.jobs"`, "freshness_seconds", "double precision"},
		`\dS pg_namespace`:       {`Table "pg_catalog.pg_namespace"`, "nspname"},
		`\du`:                    {"root", "Superuser"},
		`\dp items`:              {"items", "table"},
		`\dn`:                    {"public", "sluice_catalog"},
		`\l`:                     {"dev", "UTF8"},
		`\df`:                    {"List of functions"},
		`\dconfig timezone`:      {"timezone", "UTC"},
	}
	for cmd, wants := range checks {
		out := psql(cmd)
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("psql %s lacks %q:\n%s", cmd, w, out)
			}
		}
		if strings.Contains(out, "ERROR") || strings.Contains(out, "out of range") {
			t.Errorf("psql %s:\n%s", cmd, out)
		}
	}
	if out := psql(`\dt`); strings.Contains(out, "cheap") {
		t.Errorf(`\dt lists the view:\n%s`, out)
	}
}

// TestPsycopg2 runs a small workload through psycopg2 (extended-free,
// client-side parameter interpolation, transactions around everything).
func TestPsycopg2(t *testing.T) {
	python := testenv.Python(t)
	p := startPlayground(t)
	host, port := hostPort(t, p)
	script := `
import psycopg2, sys
conn = psycopg2.connect(host=sys.argv[1], port=int(sys.argv[2]), user="root", dbname="dev")
cur = conn.cursor()
cur.execute("SELECT version()")
assert "Sluice" in cur.fetchone()[0]
cur.execute("SET implicit_flush = true")
cur.execute("CREATE TABLE kv (k int PRIMARY KEY, v varchar)")
cur.executemany("INSERT INTO kv VALUES (%s, %s)", [(1, "one"), (2, "two"), (3, None)])
cur.execute("CREATE MATERIALIZED VIEW cnt AS SELECT count(v) AS n FROM kv")
conn.commit()
cur.execute("UPDATE kv SET v = %s WHERE k = %s", ("three", 3))
print(cur.rowcount)
cur.execute("SELECT n FROM cnt")
print(cur.fetchone()[0]) # a view holds committed writes only
conn.commit()
cur.execute("SELECT n FROM cnt")
print(cur.fetchone()[0])
cur.execute("SELECT k, v FROM kv ORDER BY k")
print(cur.fetchall())
conn.commit()
conn.close()
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := osexec.CommandContext(ctx, python, "-c", script, host, port).CombinedOutput()
	if err != nil {
		t.Fatalf("psycopg2: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"1", "2", "3", "[(1, 'one'), (2, 'two'), (3, 'three')]"}
	if !slices.Equal(lines, want) {
		t.Fatalf("psycopg2 printed %q, want %q", lines, want)
	}
}

// TestPsycopg2ConstantTypes: FROM-less constants come back with their
// types (psycopg2 converts by type OID), not as text.
func TestPsycopg2ConstantTypes(t *testing.T) {
	python := testenv.Python(t)
	p := startPlayground(t)
	host, port := hostPort(t, p)
	script := `
import psycopg2, sys
conn = psycopg2.connect(host=sys.argv[1], port=int(sys.argv[2]), user="root", dbname="dev")
conn.autocommit = True
cur = conn.cursor()
for q in ["SELECT 1", "SELECT true", "SELECT 1.5", "SELECT 'a'", "SELECT 1 + 1 AS x, 2::bigint"]:
    cur.execute(q)
    print(repr(cur.fetchone()))
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := osexec.CommandContext(ctx, python, "-c", script, host, port).CombinedOutput()
	if err != nil {
		t.Fatalf("psycopg2: %v\n%s", err, out)
	}
	want := "(1,)\n(True,)\n(Decimal('1.5'),)\n('a',)\n(2, 2)"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("psycopg2 printed\n%s\nwant\n%s", got, want)
	}
}
