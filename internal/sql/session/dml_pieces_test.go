package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestUpdateDeleteInPieces: an UPDATE or DELETE cut into pieces (each
// big enough to live only in its log segment) is one statement, on a
// table keyed by one bigint, by its hidden row id or by two columns. An
// error in a later piece fails it whole; an UPDATE that changes keys runs
// as one chunk; views see exactly the statements that succeeded.
func TestUpdateDeleteInPieces(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 2000
	opts := engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256}
	t.Run("checked", func(t *testing.T) { testUpdateDeleteInPieces(t, startPlaygroundWith(t, opts)) })
	t.Run("trusted", func(t *testing.T) { testUpdateDeleteInPieces(t, startTrustedPlayground(t, opts)) })
}

func testUpdateDeleteInPieces(t *testing.T, p *Playground) {
	c := connect(t, p)
	const long = "'a row long enough to make a piece of many kilobytes ' || g"
	exec(t, c, "CREATE TABLE t (a bigint PRIMARY KEY, b varchar, c bigint NOT NULL)")
	exec(t, c, "CREATE TABLE h (a bigint, b varchar, c bigint)")
	exec(t, c, "CREATE TABLE k (a int, b varchar, c bigint, PRIMARY KEY (a, b))")
	checks := map[string]string{}
	for _, tbl := range []string{"t", "h", "k"} {
		exec(t, c, "CREATE MATERIALIZED VIEW v"+tbl+" AS SELECT count(*) AS n, sum(a) AS sa, sum(c) AS sc FROM "+tbl)
		checks["SELECT n, sa, sc FROM v"+tbl] = "SELECT count(*), sum(a), sum(c) FROM " + tbl
	}
	wantTag(t, c, "INSERT INTO t SELECT g, "+long+", g FROM generate_series(1, 9000) g", "INSERT 0 9000")
	wantTag(t, c, "INSERT INTO h SELECT a, b, c FROM t", "INSERT 0 9000")
	wantTag(t, c, "INSERT INTO k SELECT a, 'x' || (a % 3) || b, c FROM t", "INSERT 0 9000")
	exec(t, c, "FLUSH")
	for q, code := range map[string]string{
		"UPDATE t SET c = c / (a - 8000)":                              "22012",
		"UPDATE t SET c = CASE WHEN a = 7000 THEN NULL ELSE c + 1 END": "23502",
		"UPDATE h SET c = c / (a - 8000)":                              "22012",
		"DELETE FROM h WHERE c / (a - 8000) > 0":                       "22012",
		"DELETE FROM k WHERE c / (a - 8000) > 0":                       "22012",
	} {
		wantCode(t, c, q, code)
	}
	records := logRecords(t, p, "t", "h")
	wantTag(t, c, "UPDATE t SET c = c + 1", "UPDATE 9000")
	wantTag(t, c, "UPDATE h SET c = c * 2", "UPDATE 9000")
	wantTag(t, c, "DELETE FROM h WHERE a % 3 = 0", "DELETE 3000")
	// 18 000 halves of pairs in pieces of 2 000 rows, 3 000 deletes in two.
	if got := logRecords(t, p, "t", "h"); got[0]-records[0] != 9 || got[1]-records[1] != 9+2 {
		t.Fatalf("log records written: %d to t, %d to h; want 9 and 11 (in pieces)", got[0]-records[0], got[1]-records[1])
	}
	wantTag(t, c, "UPDATE t SET a = a + 100000 WHERE a > 8990", "UPDATE 10") // keys change: one chunk
	wantTag(t, c, "UPDATE k SET c = c + 10 WHERE a % 2 = 0", "UPDATE 4500")
	wantTag(t, c, "DELETE FROM k WHERE a > 8000", "DELETE 1000")
	want := map[string]string{
		"t": "9000 41504500 40513500",
		"h": "6000 27000000 54000000",
		"k": "8000 32004000 32044000",
	}
	for tbl, w := range want {
		if got := queryStrings(t, c, "SELECT count(*), sum(a), sum(c) FROM "+tbl); !slices.Equal(got, []string{w}) {
			t.Fatalf("%s before any commit: %q, want %q", tbl, got, w)
		}
	}
	exec(t, c, "FLUSH")
	for tbl, w := range want {
		if got := queryStrings(t, c, "SELECT n, sa, sc FROM v"+tbl); !slices.Equal(got, []string{w}) {
			t.Fatalf("view of %s after FLUSH: %q, want %q", tbl, got, w)
		}
	}
}

// TestUpdateInPiecesWaitsForABlock: an UPDATE in pieces of a row an open
// block changed waits for the block, then runs over what it committed.
func TestUpdateInPiecesWaitsForABlock(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	c, block := connect(t, p), connect(t, p)
	exec(t, c, "CREATE TABLE t (a bigint PRIMARY KEY, c bigint)")
	wantTag(t, c, "INSERT INTO t SELECT g, 0 FROM generate_series(1, 1000) g", "INSERT 0 1000")
	exec(t, block, "BEGIN")
	wantTag(t, block, "UPDATE t SET c = 100 WHERE a = 777", "UPDATE 1")
	err := waitsForBlock(t, func() error {
		_, err := c.Exec(context.Background(), "UPDATE t SET c = c + 1")
		return err
	}, func() { exec(t, block, "COMMIT") })
	if err != nil {
		t.Fatal(err)
	}
	if got := queryStrings(t, c, "SELECT count(*), sum(c) FROM t"); !slices.Equal(got, []string{"1000 1100"}) {
		t.Fatalf("after both: %q, want 1000 rows summing to 1100", got)
	}
}

// logRecords returns the seq of the last log record of each table.
func logRecords(t *testing.T, p *Playground, tables ...string) []uint64 {
	t.Helper()
	var out []uint64
	for _, name := range tables {
		rel, ok := p.Engine.Catalog().ByName(name)
		if !ok {
			t.Fatalf("no table %s", name)
		}
		seq, err := p.Engine.Store().LastDML(rel.Table.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, seq)
	}
	return out
}

// TestUpdatePiecesKeepPairsWhole: with pieces of one row, each piece of
// an UPDATE still holds a whole pair.
func TestUpdatePiecesKeepPairsWhole(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 1
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE k (a int PRIMARY KEY, c bigint)")
	wantTag(t, c, "INSERT INTO k SELECT g, g FROM generate_series(1, 5) g", "INSERT 0 5")
	wantTag(t, c, "UPDATE k SET c = c + 1", "UPDATE 5")
	wantTag(t, c, "DELETE FROM k WHERE a > 3", "DELETE 2")
	if got := queryStrings(t, c, "SELECT count(*), sum(c) FROM k"); !slices.Equal(got, []string{"3 9"}) {
		t.Fatalf("after: %q", got)
	}
}

// TestChangeReturningInPieces: an UPDATE or DELETE with RETURNING outside
// a block is written in pieces too, its rows spooled (to a file, here) and
// sent once it is written: the new rows as stored (type modifiers
// applied), the deleted rows; an error in the list leaves the statement
// without effect; an UPDATE that moves keys still runs whole.
func TestChangeReturningInPieces(t *testing.T) {
	defer func(n int, b int64) { copyPieceRows, returningSpoolBytes = n, b }(copyPieceRows, returningSpoolBytes)
	copyPieceRows, returningSpoolBytes = 100, 1024
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 64})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a bigint PRIMARY KEY, n numeric(6,2), c bigint)")
	exec(t, c, "CREATE TABLE h (a bigint, c bigint)")
	wantTag(t, c, "INSERT INTO t SELECT g, 0, g FROM generate_series(1, 1000) g", "INSERT 0 1000")
	wantTag(t, c, "INSERT INTO h SELECT g, g * 10 FROM generate_series(1, 1000) g", "INSERT 0 1000")
	wantCode(t, c, "UPDATE t SET c = c + 1 RETURNING c / (a - 700)", "22012")
	records := logRecords(t, p, "t", "h")
	wantSortedRows(t, queryStrings(t, c, "UPDATE t SET n = a + 0.005, c = c + 1 WHERE a <= 500 RETURNING a, n, c"), 500,
		func(i int) string { return fmt.Sprintf("%d %d.01 %d", i+1, i+1, i+2) })
	wantSortedRows(t, queryStrings(t, c, "DELETE FROM h WHERE a % 2 = 0 RETURNING a, c"), 500,
		func(i int) string { return fmt.Sprintf("%d %d", 2*i+2, 20*i+20) })
	// 1 000 halves of pairs in pieces of 100 rows; 500 deletes in 5.
	if now := logRecords(t, p, "t", "h"); now[0]-records[0] != 10 || now[1]-records[1] != 5 {
		t.Fatalf("log records written: %d to t, %d to h; want 10 and 5 (in pieces)", now[0]-records[0], now[1]-records[1])
	}
	wantSortedRows(t, queryStrings(t, c, "UPDATE t SET a = a + 10000 WHERE a > 995 RETURNING a"), 5,
		func(i int) string { return fmt.Sprint(10996 + i) })
	for q, want := range map[string]string{
		"SELECT count(*), sum(n), sum(c) FROM t": "1000 125255.00 501000",
		"SELECT count(*), sum(a), sum(c) FROM h": "500 250000 2500000",
	} {
		if got := queryStrings(t, c, q); !slices.Equal(got, []string{want}) {
			t.Fatalf("%s: %q, want %q", q, got, want)
		}
	}
}

// wantSortedRows checks that got, ordered by its first column (an integer),
// is n rows, row i being want(i).
func wantSortedRows(t *testing.T, got []string, n int, want func(int) string) {
	t.Helper()
	first := func(r string) int {
		v, _ := strconv.Atoi(strings.Fields(r)[0])
		return v
	}
	slices.SortFunc(got, func(a, b string) int { return cmp.Compare(first(a), first(b)) })
	if len(got) != n {
		t.Fatalf("%d rows, want %d", len(got), n)
	}
	for i, r := range got {
		if r != want(i) {
			t.Fatalf("row %d: %q, want %q", i, r, want(i))
		}
	}
}

// TestReturningErrorWaitsForABlock: a RETURNING list that fails on a row
// an open block holds waits for the block, as Postgres computes RETURNING
// only once it has the row, and then runs over the committed row.
func TestReturningErrorWaitsForABlock(t *testing.T) {
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE t (a bigint PRIMARY KEY, c bigint, d bigint)")
	exec(t, a, "INSERT INTO t VALUES (7, 0, 0)")
	exec(t, a, "BEGIN")
	wantTag(t, a, "UPDATE t SET c = 5 WHERE a = 7", "UPDATE 1")
	var v int64
	err := waitsForBlock(t, func() error {
		return b.QueryRow(context.Background(), "UPDATE t SET d = d + 1 WHERE a = 7 RETURNING 10 / c").Scan(&v)
	}, func() { exec(t, a, "COMMIT") })
	if err != nil || v != 2 {
		t.Fatalf("RETURNING after the block: %v %v, want 2", v, err)
	}
}

// TestUpdateMovingKeysInPieces: an UPDATE that changes primary keys is
// written in pieces too, every old row deleted before any new row is
// inserted, so a row may move onto a key another row vacates; a new key
// the table keeps, or two rows moving onto one key, fail with 23505 and
// change nothing; RETURNING sees the new rows; in a block it is the
// block's until COMMIT.
func TestUpdateMovingKeysInPieces(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 2000
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE t (a bigint PRIMARY KEY, c bigint)")
	exec(t, a, "CREATE TABLE k (a int, b varchar, c bigint, PRIMARY KEY (b, a))")
	exec(t, a, "CREATE MATERIALIZED VIEW vt AS SELECT count(*) AS n, sum(a) AS sa, sum(c) AS sc FROM t")
	wantTag(t, a, "INSERT INTO t SELECT g, g FROM generate_series(1, 9000) g", "INSERT 0 9000")
	wantTag(t, a, "INSERT INTO k SELECT g, 'k' || (g % 7), g FROM generate_series(1, 9000) g", "INSERT 0 9000")
	for q, code := range map[string]string{
		"UPDATE t SET a = a + 1 WHERE a < 5000":  "23505", // onto 5000, which stays
		"UPDATE t SET a = 1 WHERE a IN (77, 78)": "23505", // two rows onto one key
		"UPDATE k SET a = a + 7 WHERE a < 8000":  "23505",
		"UPDATE t SET a = a + 1 RETURNING 1 / 0": "22012",
	} {
		wantCode(t, a, q, code)
	}
	records := logRecords(t, p, "t")
	wantTag(t, a, "UPDATE t SET a = a + 1", "UPDATE 9000")
	// 9 000 deletes then 9 000 inserts, in pieces of 2 000 rows.
	if got := logRecords(t, p, "t"); got[0]-records[0] != 10 {
		t.Fatalf("%d records written, want 10 (in pieces)", got[0]-records[0])
	}
	wantSortedRows(t, queryStrings(t, a, "UPDATE t SET a = a + 100 WHERE a > 8991 RETURNING a, c"), 10,
		func(i int) string { return fmt.Sprintf("%d %d", 9092+i, 8991+i) })
	wantTag(t, a, "UPDATE k SET a = a + 7", "UPDATE 9000")
	exec(t, a, "BEGIN")
	wantTag(t, a, "UPDATE t SET a = a * 2", "UPDATE 9000")
	wantOne(t, a, "SELECT count(*), sum(a), sum(c) FROM t", "9000 81029000 40504500")
	wantOne(t, b, "SELECT count(*), sum(a), sum(c) FROM t", "9000 40514500 40504500")
	exec(t, a, "COMMIT")
	exec(t, a, "FLUSH")
	wantOne(t, b, "SELECT n, sa, sc FROM vt", "9000 81029000 40504500")
	wantOne(t, b, "SELECT count(*), sum(a), sum(c) FROM k", "9000 40567500 40504500")
}

// TestUpdateMovingKeysWaitsBeforeDuplicate: an UPDATE moving keys onto a
// key an open block deletes or moves away, or of a row the block holds,
// waits for the block and then runs, as in Postgres, instead of failing
// with 23505 at once.
func TestUpdateMovingKeysWaitsBeforeDuplicate(t *testing.T) {
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	a, b := connect(t, p), connect(t, p)
	for i, c := range []struct{ block, stmt string }{
		{"DELETE FROM t WHERE a = 1", "UPDATE t SET a = 10 WHERE a IN (1, 2)"},
		{"UPDATE t SET a = 20 WHERE a = 1", "UPDATE t SET a = 10 WHERE a IN (1, 2)"},
		{"DELETE FROM t WHERE a = 3", "UPDATE t SET a = 3 WHERE a = 2"},
	} {
		tbl := fmt.Sprintf("t%d", i)
		exec(t, a, "CREATE TABLE "+tbl+" (a bigint PRIMARY KEY, c bigint)")
		exec(t, a, "INSERT INTO "+tbl+" VALUES (1, 1), (2, 2), (3, 3)")
		exec(t, b, "BEGIN")
		exec(t, b, strings.Replace(c.block, " t ", " "+tbl+" ", 1))
		err := waitsForBlock(t, func() error {
			_, err := a.Exec(context.Background(), strings.Replace(c.stmt, " t ", " "+tbl+" ", 1))
			return err
		}, func() { exec(t, b, "COMMIT") })
		if err != nil {
			t.Fatalf("%s | %s: after the block: %v", c.block, c.stmt, err)
		}
	}
}

// waitsForBlock runs run in the background, fails if it ends within
// 300 ms (it writes what an open block holds, so it must wait), then ends
// the block with end and returns run's error.
func waitsForBlock(t *testing.T, run func() error, end func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run() }()
	select {
	case err := <-done:
		t.Fatalf("ended while the block was open: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	end()
	return <-done
}
