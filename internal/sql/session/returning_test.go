package session

import (
	"context"
	"fmt"
	"testing"
)

// TestReturning: INSERT (with ON CONFLICT), UPDATE and DELETE … RETURNING
// send the rows they wrote; an error in the list leaves the statement
// without effect.
func TestReturning(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, name varchar)")
	wantRows(t, c, "INSERT INTO t VALUES (1, 'a'), (2, 'b') RETURNING id, upper(name) AS u", "1 A", "2 B")
	wantRows(t, c, "INSERT INTO t VALUES (2, 'x'), (3, 'c') ON CONFLICT (id) DO NOTHING RETURNING *", "3 c")
	wantRows(t, c, "INSERT INTO t AS o VALUES (3, 'y') ON CONFLICT (id) DO UPDATE SET name = o.name || excluded.name RETURNING o.id, name", "3 cy")
	wantRows(t, c, "UPDATE t SET name = 'z' WHERE id = 1 RETURNING id, name, id * 10", "1 z 10")
	wantRows(t, c, "DELETE FROM t WHERE id = 2 RETURNING *", "2 b")
	wantRows(t, c, "DELETE FROM t WHERE id = 99 RETURNING id")
	wantCode(t, c, "INSERT INTO t VALUES (4, 'd') RETURNING 1 / (id - 4)", "22012")
	wantCode(t, c, "UPDATE t SET name = 'w' RETURNING 1 / (id - 3)", "22012")
	wantCode(t, c, "INSERT INTO t VALUES (5, 'e') RETURNING nope", "42703")
	wantRows(t, c, "SELECT id, name FROM t ORDER BY id", "1 z", "3 cy")

	exec(t, c, "CREATE TABLE h (v int, x numeric(4, 1))")
	wantRows(t, c, "INSERT INTO h VALUES (5, 0.25) RETURNING *, v * 2 AS twice", "5 0.3 10")

	var id int32
	if err := c.QueryRow(context.Background(), "INSERT INTO t VALUES ($1, $2) RETURNING id", 7, "g").Scan(&id); err != nil || id != 7 {
		t.Fatalf("prepared RETURNING: %d %v", id, err)
	}
	exec(t, c, "BEGIN")
	wantRows(t, c, "UPDATE t SET name = name || '!' WHERE id = 7 RETURNING name", "g!")
	exec(t, c, "ROLLBACK")
	wantRows(t, c, "SELECT name FROM t WHERE id = 7", "g")
}

// TestReturningInPieces: INSERT … SELECT … RETURNING, written in pieces
// with its rows spooled to a file, returns each written row once, as
// stored (numeric rounded to its scale), in the query's order (not the
// key order a piece is sorted into), only the rows DO NOTHING inserts,
// and nothing when a later piece fails.
func TestReturningInPieces(t *testing.T) {
	defer func(n int, b int64) { copyPieceRows, returningSpoolBytes = n, b }(copyPieceRows, returningSpoolBytes)
	copyPieceRows, returningSpoolBytes = 100, 1<<10
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE h (g int, x numeric(6, 1))")
	got := queryStrings(t, c, "INSERT INTO h SELECT g, g / 4.0 FROM generate_series(1, 1000) g RETURNING g, x, x * 2")
	if len(got) != 1000 || got[0] != "1 0.3 0.6" || got[999] != "1000 250.0 500.0" {
		t.Fatalf("RETURNING gave %d rows, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
	for i, r := range got {
		var g int
		if _, err := fmt.Sscan(r, &g); err != nil || g != i+1 {
			t.Fatalf("row %d is %q: out of order", i, r)
		}
	}

	exec(t, c, "CREATE TABLE k (id bigint PRIMARY KEY, v varchar)")
	exec(t, c, "INSERT INTO k SELECT g * 2, 'held' FROM generate_series(1, 250) g")
	got = queryStrings(t, c, "INSERT INTO k SELECT 1001 - g, 'r' || g FROM generate_series(1, 1000) g ON CONFLICT DO NOTHING RETURNING id, v")
	if len(got) != 750 || got[0] != "1000 r1" || got[1] != "999 r2" || got[749] != "1 r1000" {
		t.Fatalf("DO NOTHING RETURNING gave %d rows, %q … %q", len(got), got[:2], got[len(got)-1])
	}
	wantRows(t, c, "SELECT count(*) FROM k", "1000")

	// A failure in the last piece: no row is returned or written.
	wantCode(t, c, "INSERT INTO k SELECT 2000 + g, 'x' FROM generate_series(1, 1000) g RETURNING 1 / (id - 2950)", "22012")
	wantCode(t, c, "INSERT INTO k SELECT 3000 + g % 950, 'x' FROM generate_series(1, 1000) g RETURNING id", "23505")
	// A taken key fails before a later row's RETURNING does, as row by
	// row in Postgres.
	wantCode(t, c, "INSERT INTO k SELECT 1000 + g, 'x' FROM generate_series(0, 99) g RETURNING 1 / (id - 1050)", "23505")
	wantRows(t, c, "SELECT count(*) FROM k", "1000")

	exec(t, c, "BEGIN")
	got = queryStrings(t, c, "INSERT INTO k SELECT 5000 + g, 'b' FROM generate_series(1, 300) g RETURNING id")
	exec(t, c, "ROLLBACK")
	if len(got) != 300 {
		t.Fatalf("RETURNING in a block gave %d rows", len(got))
	}
	wantRows(t, c, "SELECT count(*) FROM k", "1000")
}
