package session

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/engine"
)

func TestCopyFromStdin(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a int, b varchar, c numeric)")
	ctx := context.Background()
	text := "1\thello\t1.5\n2\t\\N\t2\n3\ttab\\there\t\\N\n"
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(text), "COPY t FROM STDIN")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("text copy: %v %v", tag, err)
	}
	csv := "a,b\n4,\"x, \"\"quoted\"\"\"\n5,\n6,\"\"\n7,\"two\nlines\"\n"
	tag, err = c.PgConn().CopyFrom(ctx, strings.NewReader(csv), "COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER)")
	if err != nil || tag.String() != "COPY 4" {
		t.Fatalf("csv copy: %v %v", tag, err)
	}
	got := queryStrings(t, c, "SELECT a, b IS NULL, length(b), c FROM t ORDER BY a")
	want := []string{"1 f 5 1.5", "2 t NULL 2", "3 f 8 NULL", "4 f 11 NULL", "5 t NULL NULL", "6 f 0 NULL", "7 f 9 NULL"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// A bad row fails with the input syntax SQLSTATE and the line.
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("8\tx\t1\nnope\ty\t2\n"), "COPY t FROM STDIN")
	if err == nil || !strings.Contains(err.Error(), "22P02") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad copy: %v", err)
	}
	if got := queryStrings(t, c, "SELECT count(*) FROM t"); !slices.Equal(got, []string{"7"}) {
		t.Fatalf("count after failed copy: %q", got)
	}
}

// TestCopyBinary: pgx's CopyFrom (COPY … FROM STDIN (FORMAT binary)) loads
// every type it sends, NULLs included, as one statement.
func TestCopyBinary(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE b (id bigint PRIMARY KEY, s varchar, f double precision, n numeric, ok boolean, at timestamp, d date)")
	at := time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)
	rows := [][]any{
		{int64(1), "one", 1.5, "12.25", true, at, at},
		{int64(2), nil, nil, nil, nil, nil, nil},
	}
	for i := 3; i <= 5000; i++ {
		rows = append(rows, []any{int64(i), "x", float64(i), "1", false, at, at})
	}
	ctx := context.Background()
	n, err := c.CopyFrom(ctx, pgx.Identifier{"b"}, []string{"id", "s", "f", "n", "ok", "at", "d"}, pgx.CopyFromRows(rows))
	if err != nil || n != int64(len(rows)) {
		t.Fatalf("CopyFrom: %d rows, %v", n, err)
	}
	wantRows(t, c, "SELECT id, s, f, n, ok, at, d FROM b WHERE id <= 2 ORDER BY id",
		"1 one 1.5 12.25 t 2026-12-01 10:30:00 2026-12-01", "2 NULL NULL NULL NULL NULL NULL")
	wantRows(t, c, "SELECT count(*), sum(id) FROM b", "5000 12502500")
	// A taken key fails the whole COPY.
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"b"}, []string{"id"}, pgx.CopyFromRows([][]any{{int64(9000)}, {int64(1)}})); err == nil {
		t.Fatal("COPY onto a taken key succeeded")
	}
	wantRows(t, c, "SELECT count(*) FROM b", "5000")
}

// TestCopyInPiecesIsOneStatement: a COPY into a table keyed by its hidden
// row id is encoded piece by piece as it is read, and is still one
// statement: every row or, when any piece fails (a bad line, a NOT NULL
// violation found when a piece is prepared), none; a view over the table
// sees exactly the rows applied.
func TestCopyInPiecesIsOneStatement(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 3
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a int NOT NULL, b varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT a, b FROM t")
	ctx := context.Background()
	var text strings.Builder
	for i := 1; i <= 10; i++ {
		text.WriteString(strconv.Itoa(i) + "\trow " + strconv.Itoa(i) + "\n")
	}
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(text.String()), "COPY t FROM STDIN")
	if err != nil || tag.String() != "COPY 10" {
		t.Fatalf("copy: %v %v", tag, err)
	}
	for _, bad := range []string{
		"11\tx\n12\tx\n13\tx\n14\tx\nnope\tx\n", // a bad line in the second piece
		"11\tx\n12\tx\n13\tx\n14\tx\n\\N\tx\n",  // a NULL in the second piece
	} {
		if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(bad), "COPY t FROM STDIN"); err == nil {
			t.Fatalf("copy of %q succeeded", bad)
		}
	}
	exec(t, c, "FLUSH")
	for _, q := range []string{"SELECT count(*), sum(a), min(b), max(b) FROM t", "SELECT count(*), sum(a), min(b), max(b) FROM v"} {
		if got := queryStrings(t, c, q); !slices.Equal(got, []string{"10 55 row 1 row 9"}) {
			t.Fatalf("%s: %q, want the first COPY's rows only", q, got)
		}
	}
}

// TestCopyPiecesReadBackFromSegments: a COPY's pieces big enough to be
// kept only in their log segments are read back from there by statements
// that read the table before any epoch commits them (read your writes),
// and a failed COPY leaves nothing readable.
func TestCopyPiecesReadBackFromSegments(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 2000 // about 80 KB a piece: each goes to a segment
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 64})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a int NOT NULL, b varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT a, b FROM t")
	ctx := context.Background()
	var text strings.Builder
	for i := 1; i <= 9000; i++ {
		text.WriteString(strconv.Itoa(i) + "\ta row long enough to make a piece of many kilobytes " + strconv.Itoa(i) + "\n")
	}
	if tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(text.String()), "COPY t FROM STDIN"); err != nil || tag.String() != "COPY 9000" {
		t.Fatalf("copy: %v %v", tag, err)
	}
	bad := strings.Replace(text.String(), "8999\t", "nope\t", 1)
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(bad), "COPY t FROM STDIN"); err == nil {
		t.Fatal("a COPY with a bad line in its last piece succeeded")
	}
	const want = "9000 40504500"
	if got := queryStrings(t, c, "SELECT count(*), sum(a) FROM t"); !slices.Equal(got, []string{want}) {
		t.Fatalf("before any commit: %q, want %q", got, want)
	}
	if got := queryStrings(t, c, "SELECT b FROM t WHERE a = 4321"); len(got) != 1 || !strings.HasSuffix(got[0], " 4321") {
		t.Fatalf("row 4321 before any commit: %q", got)
	}
	exec(t, c, "FLUSH")
	if got := queryStrings(t, c, "SELECT count(*), sum(a) FROM v"); !slices.Equal(got, []string{want}) {
		t.Fatalf("view after FLUSH: %q, want %q", got, want)
	}
}
