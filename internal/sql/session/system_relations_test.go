package session

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// systemFixture is a table t with 80 rows of key 1, a self-join view
// pairs (each row matches 80: amplification, and a heavy key) and a
// count view cnt that is paused.
func systemFixture(t *testing.T) (*Playground, *pgx.Conn) {
	t.Helper()
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (k int, v int)")
	exec(t, c, "INSERT INTO t SELECT 1, g FROM generate_series(1, 80) AS s(g)")
	exec(t, c, "CREATE MATERIALIZED VIEW pairs AS SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k")
	exec(t, c, "CREATE MATERIALIZED VIEW cnt AS SELECT count(*) AS n FROM t")
	exec(t, c, "INSERT INTO t VALUES (1, 81)")
	exec(t, c, "FLUSH")
	wantTag(t, c, "ALTER MATERIALIZED VIEW cnt PAUSE", "ALTER MATERIALIZED VIEW")
	return p, c
}

// TestSystemJobs: sluice_catalog.jobs lists every streaming job with its
// kind, status and control settings; WHERE and ORDER BY work on it, its
// columns have their types on the wire (extended protocol), and a user
// without any grant reads it.
func TestSystemJobs(t *testing.T) {
	p, c := systemFixture(t)
	wantRows(t, c, "SELECT name, kind, status, progress IS NULL, paused, rate_limit, amplification_limit FROM sluice_catalog.jobs ORDER BY name",
		"cnt materialized view paused t t NULL 1000000",
		"pairs materialized view running t f NULL 1000000",
		"t table running t f NULL NULL")
	wantRows(t, c, "SELECT * FROM sluice_catalog.jobs WHERE status = 'paused' ORDER BY name LIMIT 0")
	wantRows(t, c, "SELECT name FROM sluice_catalog.jobs WHERE status = 'paused' ORDER BY name", "cnt")
	wantRows(t, c, "SELECT count(*) FROM sluice_catalog.jobs WHERE freshness_seconds >= 0 AND definition LIKE '%JOIN%'", "1")

	rows, err := c.Query(context.Background(), "SELECT * FROM sluice_catalog.jobs WHERE name = $1", "pairs")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var oids []uint32
	for _, f := range rows.FieldDescriptions() {
		names, oids = append(names, f.Name), append(oids, f.DataTypeOID)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil || n != 1 {
		t.Fatalf("jobs where name = $1: %d rows, %v", n, err)
	}
	wantNames := []string{"id", "name", "kind", "definition", "status", "progress", "freshness_seconds", "rate_limit",
		"paused", "amplification_limit", "amplification_action", "rows_out"}
	wantOIDs := []uint32{20, 1043, 1043, 1043, 1043, 701, 701, 20, 16, 20, 1043, 20}
	if !slices.Equal(names, wantNames) || !slices.Equal(oids, wantOIDs) {
		t.Fatalf("columns %q %v, want %q %v", names, oids, wantNames, wantOIDs)
	}

	exec(t, c, "CREATE USER alice")
	cfg, err := pgx.ParseConfig(p.Server.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.User = "alice"
	alice, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close(context.Background())
	wantRows(t, alice, "SELECT count(*) FROM sluice_catalog.jobs", "3")
	wantCode(t, alice, "SELECT count(*) FROM t", "42501")
}

// TestSystemFragmentsAndActors: fragments name their executors root
// first; a job's actors are found by joining actors with jobs, or with
// IN (SELECT …), and add up to its fragments' parallelism; no actor holds
// overtaken work here, so behind_seconds is NULL.
func TestSystemFragmentsAndActors(t *testing.T) {
	_, c := systemFixture(t)
	frags := queryStrings(t, c, `SELECT f.executors FROM sluice_catalog.fragments f
		JOIN sluice_catalog.jobs j ON f.job_id = j.id WHERE j.name = 'pairs' ORDER BY f.fragment_id`)
	if !slices.ContainsFunc(frags, func(s string) bool { return strings.Contains(s, "inner join ← ") }) {
		t.Fatalf("pairs' fragments %q have no join", frags)
	}
	par := queryStrings(t, c, `SELECT sum(f.parallelism) FROM sluice_catalog.fragments f
		JOIN sluice_catalog.jobs j ON f.job_id = j.id WHERE j.name = 'pairs'`)
	joined := queryStrings(t, c, `SELECT count(*) FROM sluice_catalog.actors a
		JOIN sluice_catalog.jobs j ON a.job_id = j.id WHERE j.name = 'pairs'`)
	in := queryStrings(t, c, `SELECT count(*) FROM sluice_catalog.actors
		WHERE job_id IN (SELECT id FROM sluice_catalog.jobs WHERE name = 'pairs')`)
	if n, _ := strconv.Atoi(joined[0]); n < 2 || joined[0] != in[0] || joined[0] != par[0] {
		t.Fatalf("pairs' actors: %s by join, %s by IN, parallelism %s", joined[0], in[0], par[0])
	}
	wantRows(t, c, "SELECT count(behind_seconds), count(*) > 0, min(rows_in) >= 0 FROM sluice_catalog.actors", "0 t t")
	wantRows(t, c, `SELECT sum(a.rows_out) > 0 FROM sluice_catalog.actors a JOIN sluice_catalog.jobs j
		ON a.job_id = j.id AND j.name = 'pairs'`, "t")
}

// TestSystemBarriersAndJoins: barriers lists committed epochs with
// consistent times; join_amplification shows the self-join's matches per
// probe row and its heavy key.
func TestSystemBarriersAndJoins(t *testing.T) {
	_, c := systemFixture(t)
	waitUntil(t, "a committed epoch", func() bool {
		return queryStrings(t, c, "SELECT count(*) > 0 FROM sluice_catalog.barriers")[0] == "t"
	})
	wantRows(t, c, `SELECT count(*) FROM sluice_catalog.barriers WHERE committed < injected OR collected < injected
		OR latency_seconds < 0 OR abs(latency_seconds - collect_seconds - commit_seconds) > 0.001`, "0")
	wantRows(t, c, `SELECT name, probe_rows > 0, matched_rows > 0, max >= 64, p50 <= p99
		FROM sluice_catalog.join_amplification WHERE name = 'pairs'`, "pairs t t t t")
	// A heavy key shows for a few dozen barriers after its last heavy
	// probe row: make one, then look.
	next := 82
	waitUntil(t, "the heavy key 1", func() bool {
		exec(t, c, fmt.Sprintf("INSERT INTO t VALUES (1, %d)", next))
		next++
		exec(t, c, "FLUSH")
		got := queryStrings(t, c, "SELECT heavy_keys FROM sluice_catalog.join_amplification WHERE name = 'pairs'")
		return len(got) == 1 && strings.HasPrefix(got[0], "1 (")
	})
	wantRows(t, c, "SELECT count(*) FROM sluice_catalog.join_amplification WHERE name <> 'pairs'", "0")
}

// TestSystemRelationsRefused: a streaming job cannot read a system
// relation (0A000 naming it), none can be written, and an unknown one is
// 42P01.
func TestSystemRelationsRefused(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	pe := wantCode(t, c, "CREATE MATERIALIZED VIEW bad AS SELECT name FROM sluice_catalog.jobs", "0A000")
	if !strings.Contains(pe.Message, "sluice_catalog.jobs") {
		t.Fatalf("message %q does not name the relation", pe.Message)
	}
	exec(t, c, "CREATE TABLE t (k int)")
	wantCode(t, c, "CREATE MATERIALIZED VIEW bad AS SELECT k FROM t WHERE k IN (SELECT id FROM sluice_catalog.actors)", "0A000")
	wantCode(t, c, "INSERT INTO sluice_catalog.jobs (id) VALUES (1)", "42809")
	wantCode(t, c, "DELETE FROM sluice_catalog.barriers", "42809")
	wantCode(t, c, "SELECT * FROM sluice_catalog.nope", "42P01")
	wantRows(t, c, "SELECT count(*) FROM sluice_catalog.jobs", "1")
}

// TestSystemJobsCreating: a background job held back by its rate limit is
// creating in sluice_catalog.jobs, with a progress, and SHOW JOBS (which
// reads the same) lists it with its columns unchanged.
func TestSystemJobsCreating(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (k int, v int)")
	insertRange(t, c, 1, 2000)
	exec(t, c, "FLUSH")
	exec(t, c, "SET background_ddl = true")
	exec(t, c, "SET backfill_rate_limit = 1")
	exec(t, c, "CREATE MATERIALIZED VIEW slow AS SELECT k, count(*) AS n FROM t GROUP BY k")
	wantRows(t, c, `SELECT name, status, progress BETWEEN 0 AND 100, freshness_seconds IS NULL, rate_limit
		FROM sluice_catalog.jobs WHERE status = 'creating'`, "slow creating t t 1")
	jobs := queryRows(t, c, "SHOW JOBS")
	if len(jobs) != 1 || len(jobs[0]) != 5 || jobs[0][1] != "slow" || jobs[0][3] != "CREATING" || !strings.HasSuffix(jobs[0][4], "%") {
		t.Fatalf("SHOW JOBS = %q", jobs)
	}
	wantRows(t, c, "SELECT id::varchar FROM sluice_catalog.jobs WHERE name = 'slow'", jobs[0][0])
	wantTag(t, c, "CANCEL JOBS "+jobs[0][0], "CANCEL JOBS")
	wantRows(t, c, "SELECT count(*) FROM sluice_catalog.jobs WHERE status = 'creating'", "0")
}
