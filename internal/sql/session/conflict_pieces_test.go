package session

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/types"
)

// TestInsertSelectDoNothingInPieces: an INSERT … SELECT … ON CONFLICT DO
// NOTHING into a table keyed by one bigint, written in pieces, skips the
// rows whose key the table holds and every row after the first with a
// key (in the query's order), within a piece and across pieces, as
// Postgres does; its tag counts the rows inserted, the view sees them. In
// a transaction block too.
func TestInsertSelectDoNothingInPieces(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	opts := engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256}
	t.Run("checked", func(t *testing.T) { testInsertSelectDoNothingInPieces(t, startPlaygroundWith(t, opts)) })
	t.Run("trusted", func(t *testing.T) { testInsertSelectDoNothingInPieces(t, startTrustedPlayground(t, opts)) })
}

func testInsertSelectDoNothingInPieces(t *testing.T, p *Playground) {
	c := connect(t, p)
	exec(t, c, "CREATE TABLE src (seq bigint, id bigint, b varchar)")
	// Ids 0..999 five times over, one piece of 100 rows after another,
	// then 200 rows of seven ids, repeated within each piece.
	exec(t, c, "INSERT INTO src SELECT g, (g * 7919) % 1000, 'r' || g FROM generate_series(1, 5000) g")
	exec(t, c, "INSERT INTO src SELECT g, 2000 + g % 7, 'r' || g FROM generate_series(5001, 5200) g")
	exec(t, c, "CREATE TABLE k (id bigint PRIMARY KEY, b varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW vk AS SELECT count(*) AS n, sum(id) AS s FROM k")
	exec(t, c, "INSERT INTO k SELECT g * 3, 'old' FROM generate_series(0, 100) g")

	// The planner does not keep an INSERT's ORDER BY (noted in the
	// issue), so which of a key's proposals is first depends on the
	// scan: each key must hold one of its proposals, or "old".
	proposals := map[int64][]string{}
	for g := int64(0); g <= 100; g++ {
		proposals[3*g] = []string{"old"}
	}
	inserted := 0
	propose := func(id, g int64) {
		if _, ok := proposals[id]; !ok {
			inserted++
		}
		if p := proposals[id]; len(p) == 0 || p[0] != "old" {
			proposals[id] = append(p, fmt.Sprint("r", g))
		}
	}
	for g := int64(1); g <= 5000; g++ {
		propose(g*7919%1000, g)
	}
	for g := int64(5001); g <= 5200; g++ {
		propose(2000+g%7, g)
	}
	wantTag(t, c, "INSERT INTO k SELECT id, b FROM src ON CONFLICT DO NOTHING", fmt.Sprintf("INSERT 0 %d", inserted))
	wantTag(t, c, "INSERT INTO k SELECT id, b FROM src ON CONFLICT (id) DO NOTHING", "INSERT 0 0")
	var n, sum int64
	for id := range proposals {
		n, sum = n+1, sum+id
	}
	got := queryStrings(t, c, "SELECT id::varchar || ' ' || b FROM k")
	if len(got) != len(proposals) {
		t.Fatalf("k holds %d rows, want %d", len(got), len(proposals))
	}
	for _, row := range got {
		var id int64
		var b string
		if _, err := fmt.Sscan(row, &id, &b); err != nil || !slices.Contains(proposals[id], b) {
			t.Fatalf("k holds %q: not one of the proposals %q (%v)", row, proposals[id], err)
		}
		if proposals[id][0] == "old" && b != "old" {
			t.Fatalf("k's row %d was overwritten with %q", id, b)
		}
	}
	exec(t, c, "FLUSH")
	wantOne(t, c, "SELECT n, s FROM vk", fmt.Sprintf("%d %d", n, sum))

	// In a block, over the block's own writes.
	exec(t, c, "BEGIN")
	exec(t, c, "INSERT INTO k VALUES (4500, 'the block''s')")
	wantTag(t, c, "INSERT INTO k SELECT id + 4000, b FROM src WHERE id < 1000 ON CONFLICT DO NOTHING", "INSERT 0 999")
	wantOne(t, c, "SELECT b FROM k WHERE id = 4500", "the block's")
	exec(t, c, "COMMIT")
	wantOne(t, c, "SELECT count(*) FROM k WHERE id >= 4000", "1000")
}

// TestSkipTakenKeepsFirstProposals: the DO NOTHING filter keeps, of each
// key, the first row proposed (within a piece and across pieces), none
// whose key the table holds, and the rest in their order.
func TestSkipTakenKeepsFirstProposals(t *testing.T) {
	ctx := context.Background()
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE k (id bigint PRIMARY KEY, b varchar)")
	exec(t, c, "INSERT INTO k VALUES (3, 'held'), (40, 'held')")
	rel, ok := p.Engine.Catalog().ByName("k")
	if !ok {
		t.Fatal("no table k")
	}
	sn, err := p.Engine.LatestSnapshot(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	filters := map[string]func(*types.Chunk) (*types.Chunk, error){
		"int64":   newSkipTaken(ctx, sn, rel, int64Keys(0)).filter,
		"encoded": newSkipTaken(ctx, sn, rel, encodedKeys(newPKReader(rel))).filter,
	}
	for name, filter := range filters {
		t.Run(name, func(t *testing.T) { testSkipTaken(t, rel.Columns, filter) })
	}
	var r keyRuns[int64]
	for _, run := range [][]int64{{1, 9}, {4}, {2, 3, 8}, {5}, {6, 7}} {
		r.add(run)
	}
	for k := int64(0); k <= 10; k++ {
		if r.has(k) != (k >= 1 && k <= 9) {
			t.Fatalf("keyRuns.has(%d) = %v", k, r.has(k))
		}
	}
	if len(r.runs) > 3 {
		t.Fatalf("%d runs for 5 adds: not merged", len(r.runs))
	}
}

func testSkipTaken(t *testing.T, cols []catalog.Column, filter func(*types.Chunk) (*types.Chunk, error)) {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	piece := func(rows ...types.Row) []string {
		b := types.NewBuilder(ts, len(rows)+1)
		for _, r := range rows {
			b.Append(types.Insert, r)
		}
		kept, err := filter(b.Take())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := range kept.Capacity() {
			out = append(out, fmt.Sprint(kept.Row(i)))
		}
		return out
	}
	if got, want := piece(types.Row{int64(5), "a"}, types.Row{int64(3), "b"}, types.Row{int64(5), "c"}, types.Row{int64(1), "d"}),
		[]string{"[5 a]", "[1 d]"}; !slices.Equal(got, want) {
		t.Fatalf("first piece kept %q, want %q", got, want)
	}
	if got, want := piece(types.Row{int64(1), "e"}, types.Row{int64(40), "f"}, types.Row{int64(7), "g"}, types.Row{int64(7), "h"}),
		[]string{"[7 g]"}; !slices.Equal(got, want) {
		t.Fatalf("second piece kept %q, want %q", got, want)
	}
}

// TestInsertSelectDoNothingInPiecesAnyKey: DO NOTHING in pieces into a
// table keyed by a text and an int column keeps one row per key (the
// table's, or one of the statement's proposals), counts the keys it
// inserted, and treats a key as the table does (numeric 1.50 is 1.5);
// into a table keyed by its hidden row id every row is inserted.
func TestInsertSelectDoNothingInPiecesAnyKey(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE src (g int, name varchar, n int)")
	// 2 000 rows over 300 keys, each proposed in many pieces.
	exec(t, c, "INSERT INTO src SELECT g, 'k' || (g % 30), (g / 30) % 10 FROM generate_series(1, 2000) g")
	exec(t, c, "CREATE TABLE k (name varchar, n int, v varchar, PRIMARY KEY (name, n))")
	exec(t, c, "CREATE MATERIALIZED VIEW vk AS SELECT count(*) AS rows, count(*) FILTER (WHERE v = 'old') AS old FROM k")
	exec(t, c, "INSERT INTO k SELECT 'k' || g, g % 10, 'old' FROM generate_series(0, 29) g")
	wantTag(t, c, "INSERT INTO k SELECT name, n, 'r' || g FROM src ON CONFLICT DO NOTHING", "INSERT 0 270")
	wantTag(t, c, "INSERT INTO k SELECT name, n, 'again' FROM src ON CONFLICT (name, n) DO NOTHING", "INSERT 0 0")
	wantOne(t, c, "SELECT count(*), count(DISTINCT name || '/' || n) FROM k", "300 300")
	// Each new key's row is one of its proposals.
	wantOne(t, c, "SELECT count(*) FROM k JOIN src ON src.name = k.name AND src.n = k.n AND 'r' || src.g = k.v", "270")
	exec(t, c, "FLUSH")
	wantOne(t, c, "SELECT rows, old FROM vk", "300 30")

	exec(t, c, "CREATE TABLE d (x numeric PRIMARY KEY, v varchar)")
	exec(t, c, "INSERT INTO d VALUES (1.5, 'old')")
	wantTag(t, c, "INSERT INTO d SELECT (g % 4) / 2.0, 'r' FROM generate_series(0, 999) g ON CONFLICT DO NOTHING", "INSERT 0 3")
	wantOne(t, c, "SELECT v FROM d WHERE x = 1.50", "old")

	exec(t, c, "BEGIN")
	exec(t, c, "INSERT INTO k VALUES ('block', 1, 'the block''s')")
	wantTag(t, c, "INSERT INTO k SELECT 'block', n, 'r' || g FROM src ON CONFLICT DO NOTHING", "INSERT 0 9")
	wantOne(t, c, "SELECT v FROM k WHERE name = 'block' AND n = 1", "the block's")
	exec(t, c, "COMMIT")
	wantOne(t, c, "SELECT count(*) FROM k WHERE name = 'block'", "10")

	// The query's ORDER BY decides which proposal of a key is first, and
	// the order RETURNING sends the rows in.
	exec(t, c, "CREATE TABLE o (k int PRIMARY KEY, g int)")
	got := queryStrings(t, c, "INSERT INTO o SELECT g % 10, g FROM generate_series(1, 1000) g ORDER BY g DESC ON CONFLICT DO NOTHING RETURNING k, g")
	if want := []string{"0 1000", "9 999", "8 998"}; len(got) != 10 || !slices.Equal(got[:3], want) {
		t.Fatalf("ORDER BY g DESC kept %q, want 10 rows from %q", got, want)
	}
	wantOne(t, c, "SELECT min(g), max(g) FROM o", "991 1000")

	exec(t, c, "CREATE TABLE h (name varchar, n int)")
	wantTag(t, c, "INSERT INTO h SELECT name, n FROM src ON CONFLICT DO NOTHING", "INSERT 0 2000")
	wantOne(t, c, "SELECT count(*) FROM h", "2000")
}
