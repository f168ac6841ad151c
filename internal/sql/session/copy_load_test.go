package session

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
)

// copyRows is COPY text of rows lo..hi of (a, b), b long enough that a
// few thousand rows make a piece of many kilobytes.
func copyRows(lo, hi int) string {
	var text strings.Builder
	for i := lo; i <= hi; i++ {
		text.WriteString(strconv.Itoa(i) + "\ta row long enough to make a piece of many kilobytes " + strconv.Itoa(i) + "\n")
	}
	return text.String()
}

// setPieceRows cuts COPYs into pieces of n rows for the test.
func setPieceRows(t *testing.T, n int) {
	old := copyPieceRows
	t.Cleanup(func() { copyPieceRows = old })
	copyPieceRows = n
}

// startLoadPlayground starts a playground whose COPYs of 100 rows or
// more, in pieces of pieceRows, build a load's file; barriers come only
// on demand.
func startLoadPlayground(t *testing.T, pieceRows int) *Playground {
	t.Helper()
	setPieceRows(t, pieceRows)
	return startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 64, BulkLoadFrom: 100})
}

// loadRecords counts the load records in table's log.
func loadRecords(t *testing.T, p *Playground, table string) int {
	t.Helper()
	rel, ok := p.Engine.Catalog().ByName(table)
	if !ok {
		t.Fatalf("no table %s", table)
	}
	n := 0
	for from, retries := uint64(1), 0; ; {
		recs, err := p.Engine.Store().ReadDML(rel.Table.ID, from, 1000)
		if errors.Is(err, fs.ErrNotExist) && retries < 100 {
			// The background truncation removed a segment this read from
			// the log's start was about to open (no reader in the engine
			// reads below the truncation point): count again.
			n, from, retries = 0, 1, retries+1
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			return n
		}
		for _, r := range recs {
			if r.Load != nil {
				n++
			}
		}
		from = recs[len(recs)-1].Seq + 1 // a read ends at a load record
	}
}

// TestCopyWritesItsRowsOnce: a large COPY into a table keyed by its hidden
// row id writes the table's file with its pieces and names it in a load
// record; its rows are read, updated and deleted before the epoch that
// ingests the file commits, and after; a view created later sees the
// table's rows; a small COPY writes no file.
func TestCopyWritesItsRowsOnce(t *testing.T) {
	p := startLoadPlayground(t, 2000)
	c := connect(t, p)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (a int NOT NULL, b varchar)")
	if tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(copyRows(1, 9000)), "COPY t FROM STDIN"); err != nil || tag.String() != "COPY 9000" {
		t.Fatalf("copy: %v %v", tag, err)
	}
	if n := loadRecords(t, p, "t"); n != 1 {
		t.Fatalf("%d load records after a COPY of 9000 rows, want 1", n)
	}
	wantRows(t, c, "SELECT count(*), sum(a) FROM t", "9000 40504500")
	exec(t, c, "UPDATE t SET b = 'changed' WHERE a = 4321")
	exec(t, c, "DELETE FROM t WHERE a = 10")
	wantRows(t, c, "SELECT b FROM t WHERE a = 4321", "changed")
	exec(t, c, "FLUSH")
	wantRows(t, c, "SELECT count(*), sum(a) FROM t", "8999 40504490")
	wantRows(t, c, "SELECT b FROM t WHERE a = 4321", "changed")
	exec(t, c, "UPDATE t SET b = 'again' WHERE a = 4322")
	exec(t, c, "DELETE FROM t WHERE a = 11")
	exec(t, c, "FLUSH")
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT a, b FROM t")
	wantRows(t, c, "SELECT count(*), sum(a) FROM v", "8998 40504479")
	wantRows(t, c, "SELECT b FROM v WHERE a IN (4321, 4322) ORDER BY a", "changed", "again")
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(copyRows(1, 50)), "COPY t FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	if n := loadRecords(t, p, "t"); n != 1 {
		t.Fatalf("%d load records after a small COPY, want still 1", n)
	}
	exec(t, c, "FLUSH")
	wantRows(t, c, "SELECT count(*) FROM v", "9048")
}

// TestCopyLoadMeetsANewView: a view created while a COPY into its table is
// under way (so the COPY builds the file) gets the COPY's rows from the
// table's actors, which read them from the file.
func TestCopyLoadMeetsANewView(t *testing.T) {
	p := startLoadPlayground(t, 2000)
	c := connect(t, p)
	other := connect(t, p)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (a int NOT NULL, b varchar)")
	exec(t, c, "INSERT INTO t VALUES (0, 'before')")
	started := make(chan struct{})
	copyStarted = func() { close(started) }
	defer func() { copyStarted = nil }()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		tag, err := c.PgConn().CopyFrom(ctx, r, "COPY t FROM STDIN")
		if err == nil && tag.String() != "COPY 6000" {
			err = io.ErrUnexpectedEOF
		}
		done <- err
	}()
	if _, err := io.WriteString(w, copyRows(1, 3000)); err != nil {
		t.Fatal(err)
	}
	<-started
	exec(t, other, "CREATE MATERIALIZED VIEW v AS SELECT a, b FROM t")
	exec(t, other, "CREATE MATERIALIZED VIEW n AS SELECT count(*) AS n, sum(a) AS s FROM t")
	if _, err := io.WriteString(w, copyRows(3001, 6000)); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if err := <-done; err != nil {
		t.Fatalf("copy: %v", err)
	}
	if n := loadRecords(t, p, "t"); n != 1 {
		t.Fatalf("%d load records, want 1", n)
	}
	exec(t, other, "FLUSH")
	wantRows(t, other, "SELECT count(*), sum(a) FROM v", "6001 18003000")
	wantRows(t, other, "SELECT n, s FROM n", "6001 18003000")
	wantRows(t, other, "SELECT b FROM v WHERE a = 5999", "a row long enough to make a piece of many kilobytes 5999")
	exec(t, other, "DELETE FROM t WHERE a > 3000")
	exec(t, other, "FLUSH")
	wantRows(t, other, "SELECT count(*), sum(a) FROM v", "3001 4501500")
	wantRows(t, other, "SELECT n, s FROM n", "3001 4501500")
}

// TestFailedCopyLeavesNoLoad: a COPY that fails while building its file
// leaves no row and no load record behind.
func TestFailedCopyLeavesNoLoad(t *testing.T) {
	p := startLoadPlayground(t, 2000)
	c := connect(t, p)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (a int NOT NULL, b varchar)")
	bad := copyRows(1, 5000) + "nope\tx\n"
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(bad), "COPY t FROM STDIN"); err == nil {
		t.Fatal("a COPY with a bad last line succeeded")
	}
	if n := loadRecords(t, p, "t"); n != 0 {
		t.Fatalf("%d load records after a failed COPY", n)
	}
	exec(t, c, "FLUSH")
	wantRows(t, c, "SELECT count(*) FROM t", "0")
}

// TestCopyLoadAcrossRestarts: a load whose epoch has not committed when
// the server stops is read from its pieces after the restart (with the
// changes made to its rows before the stop), then ingested once; after
// its log is truncated no file of it is left.
func TestCopyLoadAcrossRestarts(t *testing.T) {
	setPieceRows(t, 2000)
	dir := t.TempDir()
	opts := engine.Options{Dir: dir, BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 64, BulkLoadFrom: 100}
	p := startPlaygroundWith(t, opts)
	c := connect(t, p)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (a int NOT NULL, b varchar)")
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(copyRows(1, 7000)), "COPY t FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	exec(t, c, "UPDATE t SET b = 'changed' WHERE a = 6999")
	exec(t, c, "DELETE FROM t WHERE a <= 3")
	restart := func() {
		t.Helper()
		_ = c.Close(ctx)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		p = startPlaygroundWith(t, opts)
		c = connect(t, p)
	}
	restart()
	if n := loadRecords(t, p, "t"); n != 1 {
		t.Fatalf("%d load records after the restart, want 1", n)
	}
	wantRows(t, c, "SELECT count(*), sum(a) FROM t", "6997 24503494")
	wantRows(t, c, "SELECT b FROM t WHERE a = 6999", "changed")
	exec(t, c, "FLUSH")
	restart()
	wantRows(t, c, "SELECT count(*), sum(a) FROM t", "6997 24503494")
	wantRows(t, c, "SELECT b FROM t WHERE a = 6999", "changed")
	// Truncation runs in the background every few commits: under -race
	// on a loaded machine twenty commits were once not enough.
	deadline := time.Now().Add(30 * time.Second)
	n := loadRecords(t, p, "t")
	for ; n != 0 && time.Now().Before(deadline); n = loadRecords(t, p, "t") {
		exec(t, c, "FLUSH")
	}
	if n != 0 {
		t.Fatalf("%d load records after the log was truncated", n)
	}
	files, err := filepath.Glob(filepath.Join(dir, "sluice-dml", "*.sst"))
	if err != nil || len(files) != 0 {
		t.Fatalf("load files left after truncation: %v %v", files, err)
	}
	wantRows(t, c, "SELECT count(*), sum(a) FROM t", "6997 24503494")
}

// TestConcurrentCopyLoads: COPYs into one table at once build files whose
// row ids interleave (each piece takes its own block of ids); every row is
// read, changed and committed once.
func TestConcurrentCopyLoads(t *testing.T) {
	p := startLoadPlayground(t, 500)
	c := connect(t, p)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (a int NOT NULL, b varchar)")
	const n = 3
	errs := make(chan error, n)
	for k := range n {
		cc := connect(t, p)
		go func() {
			_, err := cc.PgConn().CopyFrom(ctx, strings.NewReader(copyRows(k*4000+1, k*4000+4000)), "COPY t FROM STDIN")
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := loadRecords(t, p, "t"); got != n {
		t.Fatalf("%d load records, want %d", got, n)
	}
	exec(t, c, "DELETE FROM t WHERE a % 1000 = 0")
	exec(t, c, "UPDATE t SET b = 'changed' WHERE a % 1000 = 1")
	const want = "11988 71928000 12"
	wantRows(t, c, "SELECT count(*), sum(a), count(*) FILTER (WHERE b = 'changed') FROM t", want)
	exec(t, c, "FLUSH")
	wantRows(t, c, "SELECT count(*), sum(a), count(*) FILTER (WHERE b = 'changed') FROM t", want)
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n, sum(a) AS s FROM t")
	wantRows(t, c, "SELECT n, s FROM v", "11988 71928000")
}

// TestCopyLoadWhileThrottled: a table whose source is paused or rate
// limited when a load arrives reads the load's pieces instead of its file
// once it runs again, at the rate it is allowed; nothing is lost or
// doubled.
func TestCopyLoadWhileThrottled(t *testing.T) {
	setPieceRows(t, 2000)
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: 5 * time.Millisecond, Parallelism: 2, ChunkSize: 64, BulkLoadFrom: 100})
	c := connect(t, p)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (a int NOT NULL, b varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n, sum(a) AS s FROM t")
	copyIn := func(lo, hi int) {
		t.Helper()
		if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(copyRows(lo, hi)), "COPY t FROM STDIN"); err != nil {
			t.Fatal(err)
		}
	}
	wantTag(t, c, "ALTER TABLE t PAUSE", "ALTER TABLE")
	copyIn(1, 5000)
	wantRows(t, c, "SELECT n FROM v", "0")
	wantTag(t, c, "ALTER TABLE t SET SOURCE_RATE_LIMIT = 20000", "ALTER TABLE")
	wantTag(t, c, "ALTER TABLE t RESUME", "ALTER TABLE")
	copyIn(5001, 8000)
	exec(t, c, "FLUSH")
	wantTag(t, c, "ALTER TABLE t SET SOURCE_RATE_LIMIT = DEFAULT", "ALTER TABLE")
	exec(t, c, "FLUSH")
	wantRows(t, c, "SELECT n, s FROM v", "8000 32004000")
	wantRows(t, c, "SELECT count(*), sum(a) FROM t", "8000 32004000")
}
