package session

import (
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
)

func TestReviewScratchTypes(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	c := connect(t, p)
	run := func(sql string) { t.Logf("%-100s => %s", sql, rvTag(c, sql)) }
	q := func(sql string) { t.Logf("%-100s => %s", sql, rvQ(c, sql)) }
	run("CREATE TABLE nm (x numeric PRIMARY KEY, v text)")
	run("INSERT INTO nm VALUES (100, 'old'), (0, 'zero')")
	run("INSERT INTO nm SELECT 1e2::numeric, 'e' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("INSERT INTO nm SELECT 100.000::numeric, 'e' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("INSERT INTO nm SELECT '-0.00'::numeric, 'e' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("INSERT INTO nm SELECT 'NaN'::numeric, 'nan' || g FROM generate_series(1,2) g ON CONFLICT DO NOTHING")
	q("SELECT x, v FROM nm ORDER BY v")
	run("CREATE TABLE u (x uuid PRIMARY KEY, v text)")
	run("INSERT INTO u VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'old')")
	run("INSERT INTO u SELECT 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid, 'up' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("CREATE TABLE j (x jsonb PRIMARY KEY, v text)")
	run("INSERT INTO j VALUES ('{\"a\":1,\"b\":2}', 'old')")
	run("INSERT INTO j SELECT '{\"b\":2, \"a\":1}'::jsonb, 'r' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("INSERT INTO j SELECT '{\"b\":2, \"a\":1.0}'::jsonb, 'r' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("INSERT INTO j VALUES ('{\"b\":2, \"a\":1.0}', 'r') ON CONFLICT DO NOTHING")
	run("CREATE TABLE ar (x int[] PRIMARY KEY, v text)")
	run("INSERT INTO ar VALUES ('{1,2}', 'old')")
	run("INSERT INTO ar SELECT ARRAY[1,2], 'r' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("CREATE TABLE mix (a bigint, b bigint, PRIMARY KEY (b, a))")
	run("INSERT INTO mix SELECT g % 3, g % 5, FROM generate_series(1,100) g ON CONFLICT DO NOTHING")
	run("INSERT INTO mix SELECT g % 3, g % 5 FROM generate_series(1,100) g ON CONFLICT DO NOTHING")
	run("INSERT INTO mix SELECT g % 4, g % 5 FROM generate_series(1,400) g ON CONFLICT (a, b) DO NOTHING")
	q("SELECT count(*) FROM mix")
	run("CREATE TABLE dk (a bigint, PRIMARY KEY (a DESC))")
	run("CREATE TABLE d2 (a bigint, b text, PRIMARY KEY (a))")
	run("INSERT INTO d2 SELECT g, 'x' FROM generate_series(1,5) g")
	run("INSERT INTO d2 SELECT g % 10, 'y' FROM generate_series(1,500) g ON CONFLICT DO NOTHING")
	q("SELECT b, count(*) FROM d2 GROUP BY b ORDER BY b")
}
