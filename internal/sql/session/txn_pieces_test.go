package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	wantOne(t, a, "SELECT count(*), sum(a) FROM h", inBlock)
	wantOne(t, a, "SELECT b FROM h WHERE a = 40070", "a row long enough to make a piece of many kilobytes, and then a few words more 1007")
	wantOne(t, b, "SELECT count(*), sum(a) FROM h", "1 0")
	exec(t, b, "FLUSH")
	wantOne(t, b, "SELECT n, s FROM v", "1 0")
	exec(t, a, "COMMIT")
	wantOne(t, b, "SELECT count(*), sum(a) FROM h", inBlock)
	exec(t, b, "FLUSH")
	wantOne(t, b, "SELECT n, s FROM v", inBlock)

	// Rolled back, or failed halfway: nothing.
	exec(t, a, "BEGIN")
	if err := copyRows(a, 10001, 12000, 0); err != nil {
		t.Fatal(err)
	}
	wantOne(t, a, "SELECT count(*) FROM h WHERE a BETWEEN 10001 AND 12000", "2000")
	exec(t, a, "ROLLBACK")
	exec(t, a, "BEGIN")
	wantTag(t, a, "INSERT INTO h SELECT a + 20000, b FROM h WHERE a > 0", "INSERT 0 5899")
	if err := copyRows(a, 30001, 32000, 31700); err == nil {
		t.Fatal("a COPY with a bad row succeeded")
	}
	exec(t, a, "COMMIT") // rolls the failed block back
	wantOne(t, a, "SELECT count(*), sum(a) FROM h", inBlock)
	exec(t, a, "FLUSH")
	wantOne(t, b, "SELECT n, s FROM v", inBlock)
}

// TestKeyedBulkStatementsInBlock: into a table with a primary key, a
// block's COPY and INSERT … SELECT keep their pieces too (each big
// enough for a run of its own, the last kept as a chunk); the block reads
// them and changes their rows; their keys are row locks (another block
// that inserts one fails with 40001, a single statement waits for the
// block); a key the table or the block holds fails the statement with
// 23505; ROLLBACK frees the keys.
func TestKeyedBulkStatementsInBlock(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 5000 // the store writes a run from 4 096 rows
	opts := engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256}
	t.Run("checked", func(t *testing.T) { testKeyedBulkStatementsInBlock(t, startPlaygroundWith(t, opts)) })
	t.Run("trusted", func(t *testing.T) { testKeyedBulkStatementsInBlock(t, startTrustedPlayground(t, opts)) })
}

func testKeyedBulkStatementsInBlock(t *testing.T, p *Playground) {
	ctx := context.Background()
	a, b, c := connect(t, p), connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE k (id bigint PRIMARY KEY, b varchar)")
	exec(t, a, "CREATE MATERIALIZED VIEW vk AS SELECT count(*) AS n, sum(id) AS s FROM k")
	copyRows := func(c *pgx.Conn, from, to int) error {
		var sb strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&sb, "%d\trow %d\n", i, i)
		}
		_, err := c.PgConn().CopyFrom(ctx, strings.NewReader(sb.String()), "COPY k FROM STDIN")
		return err
	}
	wantCode := func(err error, code string) {
		t.Helper()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != code {
			t.Fatalf("%v, want %s", err, code)
		}
	}

	exec(t, a, "INSERT INTO k VALUES (0, 'before')")
	exec(t, a, "BEGIN")
	exec(t, a, "INSERT INTO k VALUES (-1, 'in the block')")
	if err := copyRows(a, 1, 12000); err != nil {
		t.Fatal(err)
	}
	wantTag(t, a, "INSERT INTO k SELECT id + 100000, b FROM k WHERE id > 0", "INSERT 0 12000")
	wantTag(t, a, "UPDATE k SET b = 'changed' WHERE id IN (4500, 104500)", "UPDATE 2")
	wantTag(t, a, "DELETE FROM k WHERE id BETWEEN 100 AND 199", "DELETE 100")
	// 1..12000 twice (the second 100 000 higher), less 100..199, and
	// -1 and 0: 23 902 rows.
	const inBlock = "23902 1343997049"
	wantOne(t, a, "SELECT count(*), sum(id) FROM k", inBlock)
	wantOne(t, a, "SELECT b FROM k WHERE id = 104500", "changed")
	wantOne(t, b, "SELECT count(*), sum(id) FROM k", "1 0")

	// Another block inserting a key of a's pieces fails at once; a single
	// statement waits for a's block.
	exec(t, c, "BEGIN")
	_, err := c.Exec(ctx, "INSERT INTO k VALUES (7777, 'other block')")
	wantCode(err, "40001")
	exec(t, c, "ROLLBACK")
	wantCode(waitsForBlock(t, func() error {
		_, err := b.Exec(ctx, "INSERT INTO k VALUES (107777, 'single statement')")
		return err
	}, func() { exec(t, a, "COMMIT") }), "23505")
	wantOne(t, b, "SELECT count(*), sum(id) FROM k", inBlock)
	exec(t, b, "FLUSH")
	wantOne(t, b, "SELECT n, s FROM vk", inBlock)

	// A key the table holds, or the block wrote before, fails the block's
	// COPY.
	exec(t, a, "BEGIN")
	wantCode(copyRows(a, 11000, 22000), "23505")
	exec(t, a, "ROLLBACK")
	exec(t, a, "BEGIN")
	exec(t, a, "INSERT INTO k VALUES (21000, 'in the block')")
	wantCode(copyRows(a, 20001, 30000), "23505")
	exec(t, a, "ROLLBACK")
	// A key the block deleted can be copied again: the piece's run is
	// newer than the block's delete, in the block and once committed.
	exec(t, a, "BEGIN")
	wantTag(t, a, "DELETE FROM k WHERE id BETWEEN 1 AND 5000", "DELETE 4900")
	if err := copyRows(a, 1, 5000); err != nil {
		t.Fatal(err)
	}
	wantOne(t, a, "SELECT count(*), min(b) FROM k WHERE id BETWEEN 1 AND 5000", "5000 row 1")
	exec(t, a, "COMMIT")
	wantOne(t, b, "SELECT count(*), min(b) FROM k WHERE id BETWEEN 1 AND 5000", "5000 row 1")
	const recopied = "24002 1344011999"
	wantOne(t, b, "SELECT count(*), sum(id) FROM k", recopied)
	exec(t, b, "FLUSH")
	wantOne(t, b, "SELECT n, s FROM vk", recopied)
	// ROLLBACK discards the pieces and frees their keys at once.
	exec(t, a, "BEGIN")
	if err := copyRows(a, 20001, 30000); err != nil {
		t.Fatal(err)
	}
	wantOne(t, a, "SELECT count(*) FROM k WHERE id > 20000 AND id <= 30000", "10000")
	exec(t, a, "ROLLBACK")
	wantTag(t, b, "INSERT INTO k VALUES (25000, 'after the rollback')", "INSERT 0 1")
	wantOne(t, b, "SELECT count(*) FROM k WHERE id > 20000 AND id <= 30000", "1")
}

// wantOne fails t unless q answers one row, w (its columns joined by
// spaces).
func wantOne(t *testing.T, c *pgx.Conn, q, w string) {
	t.Helper()
	if got := queryStrings(t, c, q); !slices.Equal(got, []string{w}) {
		t.Fatalf("%s: %q, want %q", q, got, w)
	}
}

// TestChangePiecesInBlock: in a block, an UPDATE or DELETE of many rows
// is kept as pieces too, read back by the block as runs (of new rows and
// tombstones): later statements of the block see them, other sessions do
// not; its keys are row locks (another block fails with 40001, a single
// statement waits); ROLLBACK discards it, COMMIT writes every piece in
// the block's one batch, which views see at once. Both a table with a
// primary key and one keyed by its row id.
func TestChangePiecesInBlock(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 5000 // the store writes a run from 4 096 rows
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	ctx := context.Background()
	a, b, c := connect(t, p), connect(t, p), connect(t, p)
	for _, tbl := range []string{"k (id bigint PRIMARY KEY, v bigint)", "h (id bigint, v bigint)"} {
		name := tbl[:1]
		exec(t, a, "CREATE TABLE "+tbl)
		exec(t, a, "CREATE MATERIALIZED VIEW v"+name+" AS SELECT count(*) AS n, sum(v) AS s FROM "+name)
		wantTag(t, a, "INSERT INTO "+name+" SELECT g, g FROM generate_series(1, 20000) g", "INSERT 0 20000")
	}
	exec(t, a, "FLUSH")
	records := logRecords(t, p, "k", "h")
	exec(t, a, "BEGIN")
	for _, name := range []string{"k", "h"} {
		wantTag(t, a, "UPDATE "+name+" SET v = v * 10", "UPDATE 20000")
		wantTag(t, a, "DELETE FROM "+name+" WHERE id % 4 = 0", "DELETE 5000")
		wantTag(t, a, "UPDATE "+name+" SET v = v + 1 WHERE id % 2 = 0", "UPDATE 5000")
		// 15 000 rows: 10 × (200 010 000 − 50 010 000) + 5 000.
		wantOne(t, a, "SELECT count(*), sum(v) FROM "+name, "15000 1500005000")
		wantOne(t, b, "SELECT count(*), sum(v) FROM "+name, "20000 200010000")
	}
	if now := logRecords(t, p, "k", "h"); !slices.Equal(now, records) {
		t.Fatalf("the block wrote to the log before COMMIT: %v, was %v", now, records)
	}
	exec(t, c, "BEGIN")
	_, err := c.Exec(ctx, "UPDATE k SET v = 0 WHERE id = 7777")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
		t.Fatalf("another block's UPDATE of a row the block changed: %v, want 40001", err)
	}
	exec(t, c, "ROLLBACK")
	err = waitsForBlock(t, func() error {
		_, err := b.Exec(ctx, "UPDATE k SET v = v + 1000000 WHERE id = 7777")
		return err
	}, func() { exec(t, a, "COMMIT") })
	if err != nil {
		t.Fatal(err)
	}
	// Each UPDATE of 20 000 rows is 40 000 halves of pairs: 8 pieces.
	if now := logRecords(t, p, "k", "h"); now[0]-records[0] < 10 || now[1]-records[1] < 10 {
		t.Fatalf("COMMIT wrote %d records to k, %d to h: not in pieces", now[0]-records[0], now[1]-records[1])
	}
	exec(t, b, "FLUSH")
	wantOne(t, b, "SELECT n, s FROM vk", "15000 1501005000")
	wantOne(t, b, "SELECT n, s FROM vh", "15000 1500005000")
	exec(t, a, "BEGIN")
	wantTag(t, a, "DELETE FROM h", "DELETE 15000")
	wantOne(t, a, "SELECT count(*) FROM h", "0")
	exec(t, a, "ROLLBACK")
	wantOne(t, a, "SELECT count(*), sum(v) FROM h", "15000 1500005000")
}
