package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestInsertSelectDoUpdateInPieces: an INSERT … SELECT … ON CONFLICT DO
// UPDATE written in pieces inserts the keys the table lacks, updates the
// rows its WHERE accepts (reading the table's row and the proposed one),
// counts both, and the views see exactly that; a key proposed twice, in
// one piece or two, fails the statement with 21000 and writes nothing.
func TestInsertSelectDoUpdateInPieces(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	opts := engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256}
	t.Run("checked", func(t *testing.T) { testInsertSelectDoUpdateInPieces(t, startPlaygroundWith(t, opts)) })
	t.Run("trusted", func(t *testing.T) { testInsertSelectDoUpdateInPieces(t, startTrustedPlayground(t, opts)) })
}

func testInsertSelectDoUpdateInPieces(t *testing.T, p *Playground) {
	c := connect(t, p)
	exec(t, c, "CREATE TABLE k (id bigint PRIMARY KEY, v bigint, note varchar)")
	exec(t, c, "CREATE MATERIALIZED VIEW vk AS SELECT count(*) AS n, sum(v) AS s, count(*) FILTER (WHERE note = 'upd') AS upd FROM k")
	exec(t, c, "INSERT INTO k SELECT g, g, 'old' FROM generate_series(0, 499) g")
	// Keys 1249 down to 250: 750 new, 250 held, of which the 125 even
	// ones are updated.
	wantTag(t, c, `INSERT INTO k AS t SELECT 1499 - g, (1499 - g) * 10, 'new' FROM generate_series(250, 1249) g
		ON CONFLICT (id) DO UPDATE SET v = t.v + excluded.v, note = 'upd' WHERE t.id % 2 = 0`, "INSERT 0 875")
	var n, sum, upd int64
	for id := int64(0); id < 1250; id++ {
		switch {
		case id < 250 || (id < 500 && id%2 == 1):
			n, sum = n+1, sum+id
		case id < 500:
			n, sum, upd = n+1, sum+11*id, upd+1
		default:
			n, sum = n+1, sum+10*id
		}
	}
	want := fmt.Sprintf("%d %d %d", n, sum, upd)
	wantOne(t, c, "SELECT count(*), sum(v), count(*) FILTER (WHERE note = 'upd') FROM k", want)
	wantOne(t, c, "SELECT v, note FROM k WHERE id = 300", "3300 upd")
	wantOne(t, c, "SELECT v, note FROM k WHERE id = 301", "301 old")

	wantCode(t, c, "INSERT INTO k SELECT g % 150, 0, 'twice' FROM generate_series(1, 200) g ON CONFLICT (id) DO UPDATE SET note = 'twice'", "21000")
	wantCode(t, c, "INSERT INTO k SELECT g / 2, 0, 'twice' FROM generate_series(1, 50) g ON CONFLICT (id) DO UPDATE SET note = 'twice'", "21000")
	wantOne(t, c, "SELECT count(*) FROM k WHERE note = 'twice'", "0")
	exec(t, c, "FLUSH")
	wantOne(t, c, "SELECT n, s, upd FROM vk", want)

	// RETURNING sees the rows written: inserted, and updated ones' new
	// versions, in the query's order; the list is not evaluated over the
	// rows replaced (1 / (v - 5) over the held v = 5 would fail).
	exec(t, c, "CREATE TABLE r (id bigint PRIMARY KEY, v bigint)")
	exec(t, c, "INSERT INTO r VALUES (5, 5), (7, 7)")
	got := queryStrings(t, c, `INSERT INTO r SELECT 300 - g, 6 FROM generate_series(0, 299) g
		ON CONFLICT (id) DO UPDATE SET v = excluded.v WHERE r.id = 5 RETURNING id, 1 / (v - 5)`)
	if len(got) != 299 || got[0] != "300 1" || got[294] != "5 1" || got[298] != "1 1" {
		t.Fatalf("RETURNING gave %d rows: %q … %q", len(got), got[:2], got[len(got)-1])
	}

	// A key of other columns, in a block.
	exec(t, c, "CREATE TABLE ck (name varchar, n int, v int, PRIMARY KEY (name, n))")
	exec(t, c, "INSERT INTO ck SELECT 'k' || (g % 3), g, 1 FROM generate_series(0, 299) g")
	exec(t, c, "BEGIN")
	wantTag(t, c, "INSERT INTO ck SELECT 'k' || (g % 3), g, 2 FROM generate_series(150, 449) g ON CONFLICT (name, n) DO UPDATE SET v = ck.v + excluded.v", "INSERT 0 300")
	wantOne(t, c, "SELECT count(*), sum(v) FROM ck", "450 900")
	exec(t, c, "ROLLBACK")
	wantOne(t, c, "SELECT count(*), sum(v) FROM ck", "300 300")
	wantTag(t, c, "INSERT INTO ck SELECT 'k' || (g % 3), g, 2 FROM generate_series(150, 449) g ON CONFLICT (name, n) DO UPDATE SET v = ck.v + excluded.v", "INSERT 0 300")
	wantOne(t, c, "SELECT count(*), sum(v), count(*) FILTER (WHERE v = 3) FROM ck", "450 900 150")
}

// TestDoUpdateProposedAgainAfterWhere: a key proposed twice fails DO
// UPDATE with 21000 only when the first proposal inserted or updated its
// row; after one that WHERE turned away, the next proposal meets the
// table's row, as in Postgres. In pieces and in a VALUES list alike.
func TestDoUpdateProposedAgainAfterWhere(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE m (id bigint PRIMARY KEY, v int)")
	exec(t, c, "INSERT INTO m VALUES (10, 0), (20, 0)")
	// Within a piece, and across pieces (rows 1 and 150 propose key 20).
	wantTag(t, c, `INSERT INTO m SELECT CASE WHEN g IN (1, 2) THEN 10 WHEN g IN (3, 150) THEN 20 ELSE 1000 + g END, g
		FROM generate_series(1, 160) g ORDER BY g ON CONFLICT (id) DO UPDATE SET v = excluded.v WHERE excluded.v IN (2, 150) OR m.id > 999`, "INSERT 0 158")
	wantOne(t, c, "SELECT v FROM m WHERE id = 10", "2")
	wantOne(t, c, "SELECT v FROM m WHERE id = 20", "150")
	wantCode(t, c, "INSERT INTO m SELECT 10, g FROM generate_series(1, 2) g ON CONFLICT (id) DO UPDATE SET v = excluded.v", "21000")
	wantCode(t, c, "INSERT INTO m SELECT 5, g FROM generate_series(1, 2) g ON CONFLICT (id) DO UPDATE SET v = excluded.v", "21000")
	wantTag(t, c, "INSERT INTO m VALUES (20, 7), (20, 8) ON CONFLICT (id) DO UPDATE SET v = excluded.v WHERE excluded.v = 8", "INSERT 0 1")
	wantOne(t, c, "SELECT v FROM m WHERE id = 20", "8")
	wantCode(t, c, "INSERT INTO m VALUES (20, 8), (20, 8) ON CONFLICT (id) DO UPDATE SET v = excluded.v WHERE excluded.v = 8", "21000")
}
