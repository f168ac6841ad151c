package session

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestInsertSelectInPieces: an INSERT … SELECT cut into pieces (each big
// enough to live only in its log segment) is one statement. A key the
// table holds or an earlier piece proposed, or an error in the query after
// some pieces were prepared, fails it whole; it reads the table it writes
// as it was before the statement; views see exactly the statements that
// succeeded. It runs with the tables' materializes checking their input
// and trusting it.
func TestInsertSelectInPieces(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 2000
	opts := engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256}
	t.Run("checked", func(t *testing.T) { testInsertSelectInPieces(t, startPlaygroundWith(t, opts)) })
	t.Run("trusted", func(t *testing.T) { testInsertSelectInPieces(t, startTrustedPlayground(t, opts)) })
}

func testInsertSelectInPieces(t *testing.T, p *Playground) {
	c := connect(t, p)
	exec(t, c, "CREATE TABLE src (a bigint, b varchar)")
	exec(t, c, "CREATE TABLE t (a bigint PRIMARY KEY, b varchar)")
	exec(t, c, "CREATE TABLE h (a bigint, b varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n, sum(a) AS s FROM t")
	exec(t, c, "CREATE MATERIALIZED VIEW vh AS SELECT count(*) AS n, sum(a) AS s FROM h")
	const long = "'a row long enough to make a piece of many kilobytes ' || g"
	wantTag(t, c, "INSERT INTO src SELECT g, "+long+" FROM generate_series(1, 9000) g", "INSERT 0 9000")
	wantTag(t, c, "INSERT INTO t SELECT a, b FROM src", "INSERT 0 9000")
	for q, code := range map[string]string{
		"INSERT INTO t SELECT a + 9000, b FROM src UNION ALL SELECT 4321, 'again'":                "23505",
		"INSERT INTO t SELECT a + 9000, b FROM src UNION ALL SELECT 9500, 'again'":                "23505",
		"INSERT INTO t SELECT a + 9000, b FROM src WHERE a <= 500 UNION ALL SELECT 9001, 'again'": "23505",
		"INSERT INTO t SELECT a + 9000, b FROM src WHERE 1 / (a - 8000) IS NOT NULL":              "22012",
		"INSERT INTO h SELECT a, b FROM src WHERE 1 / (a - 8000) IS NOT NULL":                     "22012",
		"INSERT INTO t SELECT CASE WHEN a = 7000 THEN NULL ELSE a + 9000 END, b FROM src":         "23502",
	} {
		_, err := c.Exec(context.Background(), q)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != code {
			t.Fatalf("%s: %v, want %s", q, err, code)
		}
	}
	// The statement's query reads the table before the statement.
	wantTag(t, c, "INSERT INTO t SELECT a + 20000, b FROM t", "INSERT 0 9000")
	wantTag(t, c, "INSERT INTO h SELECT a, b FROM t", "INSERT 0 18000")
	const want = "18000 261009000"
	for _, q := range []string{"SELECT count(*), sum(a) FROM t", "SELECT count(*), sum(a) FROM h"} {
		if got := queryStrings(t, c, q); !slices.Equal(got, []string{want}) {
			t.Fatalf("%s before any commit: %q, want %q", q, got, want)
		}
	}
	exec(t, c, "FLUSH")
	for _, q := range []string{"SELECT n, s FROM v", "SELECT n, s FROM vh", "SELECT count(*), sum(a) FROM t"} {
		if got := queryStrings(t, c, q); !slices.Equal(got, []string{want}) {
			t.Fatalf("%s after FLUSH: %q, want %q", q, got, want)
		}
	}
}

// TestInsertSelectFailsBeforeWaitingForABlock: an INSERT … SELECT whose
// rows repeat a key, or hold one the table has, fails with 23505 at once
// even when a later piece holds a key an open block inserted; without
// such a key it waits for the block, then fails or succeeds as the block
// ends.
func TestInsertSelectFailsBeforeWaitingForABlock(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2})
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE t (a bigint PRIMARY KEY, b varchar)")
	exec(t, a, "INSERT INTO t VALUES (7, 'stored')")
	exec(t, a, "BEGIN")
	exec(t, a, "INSERT INTO t VALUES (5000, 'block')")
	ctx := context.Background()
	for _, q := range []string{
		// 1 twice in the first piece, 5000 (the block's) in the last.
		"INSERT INTO t SELECT g, 'x' FROM generate_series(1, 300) g UNION ALL SELECT 1, 'again' UNION ALL SELECT 5000, 'locked'",
		// 1 in the first piece and in the last, with 5000.
		"INSERT INTO t SELECT g, 'x' FROM generate_series(1, 300) g UNION ALL SELECT 5000, 'locked' UNION ALL SELECT 1, 'again'",
		// 7, which the table holds, before 5000.
		"INSERT INTO t SELECT g + 1000, 'x' FROM generate_series(1, 300) g UNION ALL SELECT 7, 'again' UNION ALL SELECT 5000, 'locked'",
	} {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := b.Exec(qctx, q)
		cancel()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("%s: %v, want 23505 without waiting for the block", q, err)
		}
	}
	err := waitsForBlock(t, func() error {
		_, err := b.Exec(ctx, "INSERT INTO t SELECT g + 2000, 'x' FROM generate_series(1, 300) g UNION ALL SELECT 5000, 'locked'")
		return err
	}, func() { exec(t, a, "ROLLBACK") })
	if err != nil {
		t.Fatalf("the INSERT after the block rolled back: %v", err)
	}
	if got := queryStrings(t, a, "SELECT count(*), max(b) FROM t WHERE a = 5000"); !slices.Equal(got, []string{"1 locked"}) {
		t.Fatalf("key 5000 after the INSERT: %q", got)
	}
}
