package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestDeepStatementKeepsServerUp: a statement too deep to parse safely
// (30 000 terms of 1+1+…, which overflowed the C parser's stack and killed
// the server) gets 54001, and the connection and server go on serving.
func TestDeepStatementKeepsServerUp(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	deep := "SELECT " + strings.Repeat("1+", 29999) + "1"
	pe := wantCode(t, c, deep, "54001")
	if pe.Position != 1 {
		t.Errorf("position %d, want 1", pe.Position)
	}
	wantCode(t, c, "SELECT "+strings.Repeat("(", 20000)+"1"+strings.Repeat(")", 20000), "54001")
	if got := queryStrings(t, c, "SELECT 1 + 1"); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("after the deep statement: %q", got)
	}
	// A long but shallow chain still runs: 2 000 UNION ALL operands.
	union := strings.Repeat("SELECT 1 UNION ALL ", 1999) + "SELECT 1"
	if got := queryStrings(t, connect(t, p), "SELECT count(*) FROM ("+union+") u"); !slices.Equal(got, []string{"2000"}) {
		t.Fatalf("union of 2000: %q", got)
	}
}

// TestLongMultiStatementCancels: a Query of 200 000 statements is parsed a
// batch at a time and run one statement at a time, and a cancel request
// stops it there (a cancel used to wait for the whole text to be parsed,
// which was quadratic: 40 000 statements took 52 s).
func TestLongMultiStatementCancels(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, strings.Repeat("select 1::int;", 200000))
		done <- err
	}()
	// A cancel that reaches the server before the Query does finds the
	// session idle and is dropped (as in Postgres), so send one until the
	// statement ends: a loaded machine can take longer than one interval to
	// send 2.8 MB.
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-time.After(100 * time.Millisecond):
			if err := c.PgConn().CancelRequest(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("got %v, want 57014", err)
	}
	if got := queryStrings(t, c, "SELECT 2"); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("after the cancel: %q", got)
	}
}

// TestConnectionLimitsShown: SHOW reports the server's connection limits,
// which a session cannot change.
func TestConnectionLimitsShown(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	if got := queryStrings(t, c, "SHOW max_connections"); !slices.Equal(got, []string{"100"}) {
		t.Errorf("max_connections = %q", got)
	}
	if got := queryStrings(t, c, "SHOW superuser_reserved_connections"); !slices.Equal(got, []string{"3"}) {
		t.Errorf("superuser_reserved_connections = %q", got)
	}
	wantCode(t, c, "SET max_connections = 5", "55P02")
}

// TestDiskFull: on a nearly full disk an INSERT or a DDL fails at once
// with 53100 (it used to block for ever or panic in Pebble), reads go on,
// nothing acknowledged is lost, and writes resume once space is freed.
func TestDiskFull(t *testing.T) {
	fs := vfs.NewMem()
	roomy := vfs.DiskUsage{AvailBytes: 8 << 30, TotalBytes: 10 << 30}
	fs.TestingSetDiskUsage(roomy)
	p := startPlaygroundWith(t, engine.Options{FS: fs, Dir: "data", BarrierInterval: 5 * time.Millisecond, Parallelism: 2})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v text)")
	exec(t, c, "INSERT INTO t VALUES (1, 'kept')")
	fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 10 << 20, TotalBytes: 10 << 30})
	time.Sleep(60 * time.Millisecond) // the guard asks the file system at most every 50 ms
	pe := wantCode(t, c, "INSERT INTO t VALUES (2, 'refused')", "53100")
	if !strings.Contains(pe.Message, "disk full") {
		t.Errorf("message %q", pe.Message)
	}
	wantCode(t, c, "CREATE TABLE u (a int)", "53100")
	if got := queryStrings(t, c, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1 kept"}) {
		t.Fatalf("reading on a full disk: %q", got)
	}
	fs.TestingSetDiskUsage(roomy)
	time.Sleep(60 * time.Millisecond)
	exec(t, c, "INSERT INTO t VALUES (2, 'after')")
	exec(t, c, "CREATE TABLE u (a int)") // the refused CREATE left nothing behind
	if got := queryStrings(t, c, "SELECT count(*) FROM t"); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("after space was freed: %q", got)
	}
}

// TestQueryMemoryLimit: an ORDER BY, a GROUP BY's groups, DISTINCT and a
// hash join go to disk past query_memory_limit; what cannot be split (one
// group's string_agg, the rows of one join key) fails with 53200 and the
// session goes on; a query that streams is not limited.
func TestQueryMemoryLimit(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE m (id int PRIMARY KEY, pad text)")
	exec(t, c, "INSERT INTO m SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g")
	if got := queryStrings(t, c, "SHOW query_memory_limit"); len(got) != 1 || got[0] == "0" {
		t.Fatalf("default query_memory_limit = %q", got)
	}
	exec(t, c, "SET query_memory_limit = '1MB'")
	if got := queryStrings(t, c, "SHOW query_memory_limit"); !slices.Equal(got, []string{"1MB"}) {
		t.Fatalf("SHOW query_memory_limit = %q", got)
	}
	// An ORDER BY past the limit sorts on disk; a GROUP BY, DISTINCT and a
	// join work in partitions on disk.
	if got := queryStrings(t, c, "SELECT id FROM m ORDER BY pad, id DESC LIMIT 3"); !slices.Equal(got, []string{"20000", "19999", "19998"}) {
		t.Fatalf("an ORDER BY sorted on disk: %q", got)
	}
	if got := queryStrings(t, c, "SELECT count(*), sum(n) FROM (SELECT id, count(*) AS n FROM m GROUP BY id) s"); !slices.Equal(got, []string{"20000 20000"}) {
		t.Fatalf("a GROUP BY in partitions: %q", got)
	}
	for q, want := range map[string]string{
		"SELECT count(*), sum(b.id) FROM m a JOIN m b ON a.id = b.id":   "20000 200010000",
		"SELECT count(*) FROM (SELECT DISTINCT pad || id FROM m) s":     "20000",
		"SELECT count(*) FROM m a LEFT JOIN m b ON a.id = b.id + 10000": "20000",
	} {
		if got := queryStrings(t, c, q); !slices.Equal(got, []string{want}) {
			t.Fatalf("%s on disk: %q, want %s", q, got, want)
		}
	}
	for _, q := range []string{
		"SELECT count(*) FROM m a JOIN m b ON a.pad = b.pad",
		"SELECT length(string_agg(pad, ',')) FROM m",
	} {
		pe := wantCode(t, c, q, "53200")
		if !strings.Contains(pe.Message, "1 MB") || pe.Hint == "" {
			t.Errorf("%s: %q (hint %q)", q, pe.Message, pe.Hint)
		}
	}
	// A statement too large to parse within the limit is refused before it
	// is parsed (an IN list costs about 1.7 KB per item).
	inList := "SELECT count(*) FROM m WHERE id IN (" + strings.Repeat("1,", 20000) + "2)"
	if pe := wantCode(t, c, inList, "54000"); !strings.Contains(pe.Message, "statement too large") {
		t.Errorf("a 20 000-item IN list: %q", pe.Message)
	}
	if got := queryStrings(t, c, "SELECT count(*) FROM m WHERE pad LIKE 'x%'"); !slices.Equal(got, []string{"20000"}) {
		t.Fatalf("a streaming query under the limit: %q", got)
	}
	exec(t, c, "SET query_memory_limit = 0")
	if got := queryStrings(t, c, "SELECT count(*) FROM (SELECT id FROM m ORDER BY pad) s"); !slices.Equal(got, []string{"20000"}) {
		t.Fatalf("without a limit: %q", got)
	}
	wantCode(t, c, "SET query_memory_limit = 'lots'", "22023")
	exec(t, c, "SET query_memory_limit = 2048") // kB, as Postgres reads a plain number
	if got := queryStrings(t, c, "SHOW query_memory_limit"); !slices.Equal(got, []string{"2MB"}) {
		t.Fatalf("2048 (kB) shows as %q", got)
	}
}
