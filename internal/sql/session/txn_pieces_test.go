package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestBulkStatementsInBlock: a COPY and an INSERT … SELECT into a table
// keyed by its hidden row id, inside BEGIN … COMMIT, are written in pieces
// that live only in their log segments (as outside a block). The block's
// later statements read them, update and delete some of their rows, and
// another session sees none of it until COMMIT, then all of it; the views
// too. ROLLBACK, and a COPY that fails halfway, leave nothing.
func TestBulkStatementsInBlock(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 1200 // 100 KB: the first pieces go to segments
	opts := engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256}
	t.Run("checked", func(t *testing.T) { testBulkStatementsInBlock(t, startPlaygroundWith(t, opts)) })
	t.Run("trusted", func(t *testing.T) { testBulkStatementsInBlock(t, startTrustedPlayground(t, opts)) })
}

func testBulkStatementsInBlock(t *testing.T, p *Playground) {
	ctx := context.Background()
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE h (a bigint, b varchar)")
	exec(t, a, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n, sum(a) AS s FROM h")
	copyRows := func(c *pgx.Conn, from, to int, bad int) error {
		var sb strings.Builder
		for i := from; i <= to; i++ {
			if i == bad {
				fmt.Fprintf(&sb, "x\tnot a number\n")
				continue
			}
			fmt.Fprintf(&sb, "%d\ta row long enough to make a piece of many kilobytes, and then a few words more %d\n", i, i)
		}
		_, err := c.PgConn().CopyFrom(ctx, strings.NewReader(sb.String()), "COPY h FROM STDIN")
		return err
	}
	want := func(c *pgx.Conn, q, w string) {
		t.Helper()
		if got := queryStrings(t, c, q); !slices.Equal(got, []string{w}) {
			t.Fatalf("%s: %q, want %q", q, got, w)
		}
	}

	exec(t, a, "INSERT INTO h VALUES (0, 'before')")
	exec(t, a, "BEGIN")
	exec(t, a, "INSERT INTO h VALUES (-1, 'first in the block')")
	if err := copyRows(a, 1, 3000, 0); err != nil {
		t.Fatal(err)
	}
	wantTag(t, a, "INSERT INTO h SELECT a + 3000, b FROM h WHERE a > 0", "INSERT 0 3000")
	wantTag(t, a, "UPDATE h SET a = a * 10 WHERE a IN (7, 4007)", "UPDATE 2")
	wantTag(t, a, "DELETE FROM h WHERE a BETWEEN 100 AND 199 OR a = 5999", "DELETE 101")
	// 1..6000 (sum 18 003 000), less 100..199 and 5999 (20 949), 7 and
	// 4007 ten times (36 126 more), -1 and 0: 5 901 rows.
	const inBlock = "5901 18018176"
	want(a, "SELECT count(*), sum(a) FROM h", inBlock)
	want(a, "SELECT b FROM h WHERE a = 40070", "a row long enough to make a piece of many kilobytes, and then a few words more 1007")
	want(b, "SELECT count(*), sum(a) FROM h", "1 0")
	exec(t, b, "FLUSH")
	want(b, "SELECT n, s FROM v", "1 0")
	exec(t, a, "COMMIT")
	want(b, "SELECT count(*), sum(a) FROM h", inBlock)
	exec(t, b, "FLUSH")
	want(b, "SELECT n, s FROM v", inBlock)

	// Rolled back, or failed halfway: nothing.
	exec(t, a, "BEGIN")
	if err := copyRows(a, 10001, 12000, 0); err != nil {
		t.Fatal(err)
	}
	want(a, "SELECT count(*) FROM h WHERE a BETWEEN 10001 AND 12000", "2000")
	exec(t, a, "ROLLBACK")
	exec(t, a, "BEGIN")
	wantTag(t, a, "INSERT INTO h SELECT a + 20000, b FROM h WHERE a > 0", "INSERT 0 5899")
	if err := copyRows(a, 30001, 32000, 31700); err == nil {
		t.Fatal("a COPY with a bad row succeeded")
	}
	exec(t, a, "COMMIT") // rolls the failed block back
	want(a, "SELECT count(*), sum(a) FROM h", inBlock)
	exec(t, a, "FLUSH")
	want(b, "SELECT n, s FROM v", inBlock)
}
