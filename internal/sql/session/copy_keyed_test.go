package session

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestKeyedCopyInPieces: a COPY into a table with a primary key, in pieces
// big enough to live only in their log segments, is one statement. Its
// rows are readable by key and by scan before any epoch commits them, a
// key the table holds or an earlier piece proposed fails the whole COPY
// with 23505 (whichever piece it is in), keys in no order are loaded
// too, and a view sees exactly the rows of the COPYs that succeeded.
// It runs with the table's materialize checking its input and trusting it
// (the playground's setting: the rows become fresh runs).
func TestKeyedCopyInPieces(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 2000 // about 80 KB a piece: each goes to a segment
	opts := engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256}
	t.Run("checked", func(t *testing.T) { testKeyedCopyInPieces(t, startPlaygroundWith(t, opts)) })
	t.Run("trusted", func(t *testing.T) { testKeyedCopyInPieces(t, startTrustedPlayground(t, opts)) })
}

func testKeyedCopyInPieces(t *testing.T, p *Playground) {
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a bigint PRIMARY KEY, b varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n, sum(a) AS s FROM t")
	ctx := context.Background()
	lines := func(lo, hi int) string {
		var text strings.Builder
		for i := lo; i <= hi; i++ {
			text.WriteString(strconv.Itoa(i) + "\ta row long enough to make a piece of many kilobytes " + strconv.Itoa(i) + "\n")
		}
		return text.String()
	}
	if tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(lines(1, 9000)), "COPY t FROM STDIN"); err != nil || tag.String() != "COPY 9000" {
		t.Fatalf("copy: %v %v", tag, err)
	}
	for name, text := range map[string]string{
		"a key the table holds, in the last piece":    lines(9001, 17000) + "4321\tagain\n",
		"a key an earlier piece proposed":             lines(9001, 17000) + "9500\tagain\n",
		"a key proposed twice in one piece (falling)": lines(9001, 9500) + lines(9001, 9001),
	} {
		_, err := c.PgConn().CopyFrom(ctx, strings.NewReader(text), "COPY t FROM STDIN")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("%s: %v, want 23505", name, err)
		}
	}
	// Keys in no order: each piece is sorted before it is written.
	shuffled := strings.SplitAfter(lines(20001, 29000), "\n")
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(strings.Join(shuffled, "")), "COPY t FROM STDIN"); err != nil || tag.String() != "COPY 9000" {
		t.Fatalf("copy of shuffled keys: %v %v", tag, err)
	}
	const want = "18000 261009000"
	if got := queryStrings(t, c, "SELECT count(*), sum(a) FROM t"); !slices.Equal(got, []string{want}) {
		t.Fatalf("before any commit: %q, want %q", got, want)
	}
	if got := queryStrings(t, c, "SELECT b FROM t WHERE a = 4321"); len(got) != 1 || !strings.HasSuffix(got[0], " 4321") {
		t.Fatalf("row 4321 before any commit: %q", got)
	}
	// The key check of a later statement reads the pieces from the tail.
	if _, err := c.Exec(ctx, "INSERT INTO t VALUES (8765, 'dup')"); err == nil || !strings.Contains(err.Error(), "23505") {
		t.Fatalf("INSERT of a key the COPY wrote, before any commit: %v, want 23505", err)
	}
	exec(t, c, "FLUSH")
	if got := queryStrings(t, c, "SELECT n, s FROM v"); !slices.Equal(got, []string{want}) {
		t.Fatalf("view after FLUSH: %q, want %q", got, want)
	}
	if got := queryStrings(t, c, "SELECT count(*), sum(a) FROM t"); !slices.Equal(got, []string{want}) {
		t.Fatalf("table after FLUSH: %q, want %q", got, want)
	}
}

// TestKeyedCopyWaitsForABlocksKeys: a COPY of a key an open transaction
// block inserted waits for the block, then fails with 23505; it never
// writes the key beside the block's row.
func TestKeyedCopyWaitsForABlocksKeys(t *testing.T) {
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2})
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE t (a bigint PRIMARY KEY, b varchar)")
	exec(t, a, "BEGIN")
	exec(t, a, "INSERT INTO t VALUES (5, 'block')")
	ctx := context.Background()
	err := waitsForBlock(t, func() error {
		_, err := b.PgConn().CopyFrom(ctx, strings.NewReader("5\tcopy\n6\tcopy\n"), "COPY t FROM STDIN")
		return err
	}, func() { exec(t, a, "COMMIT") })
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("the COPY after the block committed: %v, want 23505", err)
	}
	if got := queryStrings(t, a, "SELECT a, b FROM t"); !slices.Equal(got, []string{"5 block"}) {
		t.Fatalf("rows: %q", got)
	}
}

// TestKeyedCopyIsSeenWholeOrNotAtAll: a reader of the table during a COPY
// in many pieces sees none of its rows or all of them.
func TestKeyedCopyIsSeenWholeOrNotAtAll(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 2000
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2})
	w, r := connect(t, p), connect(t, p)
	exec(t, w, "CREATE TABLE t (a bigint PRIMARY KEY, b varchar)")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan []string, 1)
	go func() {
		var counts []string
		for ctx.Err() == nil {
			got := r.PgConn().Exec(ctx, "SELECT count(*) FROM t")
			rs, err := got.ReadAll()
			if err != nil || len(rs) == 0 || len(rs[0].Rows) == 0 {
				continue
			}
			if n := string(rs[0].Rows[0][0]); !slices.Contains(counts, n) {
				counts = append(counts, n)
			}
		}
		seen <- counts
	}()
	var text strings.Builder
	for i := 1; i <= 60000; i++ {
		text.WriteString(strconv.Itoa(i) + "\ta row long enough to make pieces of many kilobytes\n")
	}
	if _, err := w.PgConn().CopyFrom(context.Background(), strings.NewReader(text.String()), "COPY t FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	for _, n := range <-seen {
		if n != "0" && n != "60000" {
			t.Fatalf("a reader saw %s of the COPY's 60000 rows", n)
		}
	}
}

// TestKeyedCopyChecksKeysAsStored: keys are checked as the table stores
// them, after the columns' type modifiers, and a NULL key is a NOT NULL
// violation.
func TestKeyedCopyChecksKeysAsStored(t *testing.T) {
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a numeric(4, 1) PRIMARY KEY, b varchar)")
	ctx := context.Background()
	for text, code := range map[string]string{
		"1.01\tx\n1.04\ty\n": "23505", // both 1.0
		"\\N\tx\n":           "23502",
	} {
		_, err := c.PgConn().CopyFrom(ctx, strings.NewReader(text), "COPY t FROM STDIN")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != code {
			t.Fatalf("COPY of %q: %v, want %s", text, err, code)
		}
	}
	if got := queryStrings(t, c, "SELECT count(*) FROM t"); !slices.Equal(got, []string{"0"}) {
		t.Fatalf("rows after the failed COPYs: %q", got)
	}
}

// TestInsertChecksKeysAsStored: INSERT checks its keys after the columns'
// type modifiers too, against each other and against the table.
func TestInsertChecksKeysAsStored(t *testing.T) {
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a numeric(4, 1) PRIMARY KEY, b varchar)")
	exec(t, c, "INSERT INTO t VALUES (2.0, 'x')")
	for _, q := range []string{
		"INSERT INTO t VALUES (1.01, 'x'), (1.04, 'y')", // both 1.0
		"INSERT INTO t VALUES (2.04, 'y')",              // 2.0, stored
	} {
		_, err := c.Exec(context.Background(), q)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("%s: %v, want 23505", q, err)
		}
	}
	if got := queryStrings(t, c, "SELECT a, b FROM t"); !slices.Equal(got, []string{"2.0 x"}) {
		t.Fatalf("rows: %q", got)
	}
}
