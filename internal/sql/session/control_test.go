package session

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func wantTag(t *testing.T, c *pgx.Conn, sql, tag string) {
	t.Helper()
	if got := exec(t, c, sql).String(); got != tag {
		t.Fatalf("%s: tag %q, want %q", sql, got, tag)
	}
}

func insertRange(t *testing.T, c *pgx.Conn, from, to int) {
	t.Helper()
	var b strings.Builder
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, %d)", i, i)
	}
	exec(t, c, "INSERT INTO t VALUES "+b.String())
}

func flushCount(t *testing.T, c *pgx.Conn) string {
	t.Helper()
	exec(t, c, "FLUSH")
	got := queryStrings(t, c, "SELECT n FROM cnt")
	if len(got) != 1 {
		t.Fatalf("cnt = %q", got)
	}
	return got[0]
}

// TestAlterRateLimitAndPause drives the control statements over pgwire: a
// table at rate limit 0 (or paused) holds new rows back from its views
// while FLUSH still completes; DEFAULT (or RESUME) lets them through.
func TestAlterRateLimitAndPause(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (k int, v int)")
	insertRange(t, c, 1, 5)
	exec(t, c, "CREATE MATERIALIZED VIEW cnt AS SELECT count(*) AS n FROM t")
	if got := flushCount(t, c); got != "5" {
		t.Fatalf("cnt = %s, want 5", got)
	}
	wantTag(t, c, "ALTER TABLE t SET SOURCE_RATE_LIMIT = 0", "ALTER TABLE")
	insertRange(t, c, 6, 8)
	if got := flushCount(t, c); got != "5" {
		t.Fatalf("cnt = %s under SOURCE_RATE_LIMIT 0, want 5", got)
	}
	wantTag(t, c, "ALTER TABLE t SET RATE_LIMIT = DEFAULT", "ALTER TABLE")
	if got := flushCount(t, c); got != "8" {
		t.Fatalf("cnt = %s after DEFAULT, want 8", got)
	}
	wantTag(t, c, "ALTER TABLE t PAUSE", "ALTER TABLE")
	insertRange(t, c, 9, 9)
	if got := flushCount(t, c); got != "8" {
		t.Fatalf("cnt = %s while paused, want 8", got)
	}
	wantTag(t, c, "ALTER TABLE t RESUME", "ALTER TABLE")
	if got := flushCount(t, c); got != "9" {
		t.Fatalf("cnt = %s after RESUME, want 9", got)
	}
	wantTag(t, c, "ALTER MATERIALIZED VIEW cnt SET BACKFILL_RATE_LIMIT = 100", "ALTER MATERIALIZED VIEW")
	wantTag(t, c, "ALTER MATERIALIZED VIEW cnt PAUSE", "ALTER MATERIALIZED VIEW")
	wantTag(t, c, "ALTER MATERIALIZED VIEW cnt RESUME", "ALTER MATERIALIZED VIEW")
	wantCode(t, c, "ALTER MATERIALIZED VIEW t PAUSE", "42809")
	wantCode(t, c, "ALTER TABLE nope SET RATE_LIMIT = 1", "42P01")
}

// TestShowAndCancelJobsOverPgwire: with background_ddl a CREATE returns at
// once; SHOW JOBS lists the job while its rate-limited backfill runs and
// CANCEL JOBS removes it.
func TestShowAndCancelJobsOverPgwire(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (k int, v int)")
	insertRange(t, c, 1, 2000)
	exec(t, c, "FLUSH")
	exec(t, c, "SET background_ddl = true")
	exec(t, c, "SET backfill_rate_limit = 100")
	if got := queryStrings(t, c, "SHOW backfill_rate_limit"); !slices.Equal(got, []string{"100"}) {
		t.Fatalf("SHOW backfill_rate_limit = %q", got)
	}
	wantTag(t, c, "CREATE MATERIALIZED VIEW slow AS SELECT k, count(*) AS n FROM t GROUP BY k", "CREATE MATERIALIZED VIEW")
	jobs := queryStrings(t, c, "SHOW JOBS")
	if len(jobs) != 1 {
		t.Fatalf("SHOW JOBS = %q, want the background view", jobs)
	}
	f := strings.Fields(jobs[0])
	if len(f) < 4 || f[1] != "slow" || !strings.Contains(jobs[0], "CREATING") || !strings.Contains(jobs[0], "GROUP BY k") {
		t.Fatalf("SHOW JOBS row %q", jobs[0])
	}
	wantCode(t, c, "CANCEL JOBS 999999", "42704")
	wantTag(t, c, "CANCEL JOBS "+f[0], "CANCEL JOBS")
	if jobs := queryStrings(t, c, "SHOW JOBS"); len(jobs) != 0 {
		t.Fatalf("SHOW JOBS after cancel = %q", jobs)
	}
	if got := queryStrings(t, c, "SHOW MATERIALIZED VIEWS"); slices.Contains(got, "slow") {
		t.Fatalf("slow survived CANCEL JOBS: %q", got)
	}
	// Without a limit a background view catches up and leaves SHOW JOBS.
	exec(t, c, "SET backfill_rate_limit = DEFAULT")
	exec(t, c, "CREATE MATERIALIZED VIEW fast AS SELECT count(*) AS n FROM t")
	waitUntil(t, "fast created", func() bool { return len(queryStrings(t, c, "SHOW JOBS")) == 0 })
	exec(t, c, "FLUSH")
	if got := queryStrings(t, c, "SELECT n FROM fast"); !slices.Equal(got, []string{"2000"}) {
		t.Fatalf("fast = %q", got)
	}
}

// TestShowJobsProgressOverPgwire: SHOW JOBS shows a rate-limited
// backfill's progress as a percentage ("42.17%") that rises, stays below
// 100 % while the job runs, and the job leaves the list once done.
func TestShowJobsProgressOverPgwire(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (k int, v int)")
	// Per actor above the limiter's burst (four chunks), so the limit bites.
	const rows = 12000
	for from := 1; from <= rows; from += 2000 {
		insertRange(t, c, from, from+1999)
	}
	exec(t, c, "FLUSH")
	exec(t, c, "SET background_ddl = true")
	exec(t, c, "SET backfill_rate_limit = 1000")
	exec(t, c, "CREATE MATERIALIZED VIEW slow AS SELECT count(*) AS n FROM t")
	last := -1.0
	progress := func() (float64, bool) {
		t.Helper()
		jobs := queryRows(t, c, "SHOW JOBS")
		if len(jobs) == 0 {
			return 0, false
		}
		if len(jobs) != 1 || len(jobs[0]) != 5 || jobs[0][1] != "slow" {
			t.Fatalf("SHOW JOBS = %q", jobs)
		}
		text := jobs[0][4]
		pct, err := strconv.ParseFloat(strings.TrimSuffix(text, "%"), 64)
		if err != nil || !strings.HasSuffix(text, "%") || !regexp.MustCompile(`^\d+\.\d\d%$`).MatchString(text) {
			t.Fatalf("progress %q is not a percentage like 42.17%%", text)
		}
		if pct < 0 || pct > 100 || pct < last {
			t.Fatalf("progress %q after %.2f%%", text, last)
		}
		last = pct
		return pct, true
	}
	var first float64
	waitUntil(t, "backfill under way", func() bool { first, _ = progress(); return first > 0 })
	if first >= 100 {
		t.Fatalf("progress %.2f%%: the rate limit did not hold the backfill back", first)
	}
	waitUntil(t, "progress rises", func() bool { pct, _ := progress(); return pct > first })
	wantTag(t, c, "ALTER MATERIALIZED VIEW slow SET BACKFILL_RATE_LIMIT = DEFAULT", "ALTER MATERIALIZED VIEW")
	waitUntil(t, "slow created", func() bool { _, listed := progress(); return !listed })
	exec(t, c, "FLUSH")
	if got := queryStrings(t, c, "SELECT n FROM slow"); !slices.Equal(got, []string{strconv.Itoa(rows)}) {
		t.Fatalf("slow = %q", got)
	}
}

// queryRows returns every row of sql, each column as text.
func queryRows(t *testing.T, c *pgx.Conn, sql string) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rs.Close()
	var out [][]string
	for rs.Next() {
		vals := rs.RawValues()
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = string(v)
		}
		out = append(out, row)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
