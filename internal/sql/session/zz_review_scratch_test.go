package session

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sluice-db/sluice/internal/engine"
)

func rvTag(c *pgx.Conn, sql string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tag, err := c.Exec(ctx, sql)
	if err != nil {
		return "ERR " + err.Error()
	}
	return tag.String()
}

func rvQ(c *pgx.Conn, sql string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "ERR " + err.Error()
	}
	defer rs.Close()
	out := ""
	for rs.Next() {
		for _, v := range rs.RawValues() {
			out += string(v) + ","
		}
		out += ";"
	}
	if err := rs.Err(); err != nil {
		return out + "ERR " + err.Error()
	}
	return out
}

func TestReviewScratch(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	c := connect(t, p)
	run := func(sql string) { t.Logf("%-100s => %s", sql, rvTag(c, sql)) }
	q := func(sql string) { t.Logf("%-100s => %s", sql, rvQ(c, sql)) }

	// numeric typmod
	run("CREATE TABLE n (x numeric(4,1) PRIMARY KEY, v text)")
	run("INSERT INTO n VALUES (1.5, 'old')")
	run("INSERT INTO n SELECT 1.54, 'a' FROM generate_series(1,3) ON CONFLICT DO NOTHING")
	run("INSERT INTO n SELECT 1.44 + g/100.0, 'b' || g FROM generate_series(1,5) g ON CONFLICT DO NOTHING")
	q("SELECT x, v FROM n ORDER BY x")
	// float -0 and NaN
	run("CREATE TABLE f (x float8 PRIMARY KEY, v text)")
	run("INSERT INTO f VALUES (0, 'old')")
	run("INSERT INTO f SELECT '-0'::float8, 'neg' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("INSERT INTO f SELECT 'NaN'::float8, 'nan' || g FROM generate_series(1,3) g ON CONFLICT DO NOTHING")
	run("INSERT INTO f SELECT 'NaN'::float8, 'nan' || g FROM generate_series(1,3) g ON CONFLICT DO NOTHING")
	q("SELECT x, v FROM f ORDER BY v")
	// interval
	run("CREATE TABLE iv (x interval PRIMARY KEY, v text)")
	run("INSERT INTO iv VALUES ('1 day', 'old')")
	run("INSERT INTO iv SELECT '24 hours'::interval, 'h' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("INSERT INTO iv SELECT (g || ' days')::interval * 0 + '1 mon'::interval, 'm' || g FROM generate_series(1,2) g ON CONFLICT DO NOTHING")
	run("INSERT INTO iv SELECT '30 days'::interval, 'd' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	q("SELECT x, v FROM iv ORDER BY v")
	// char(n)
	run("CREATE TABLE ch (x char(3) PRIMARY KEY, v text)")
	run("INSERT INTO ch VALUES ('a', 'old')")
	run("INSERT INTO ch SELECT 'a  ', 'pad' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	run("INSERT INTO ch SELECT 'a ', 'pad' FROM generate_series(1,2) ON CONFLICT DO NOTHING RETURNING *")
	q("SELECT x || '|', v FROM ch ORDER BY v")
	// timestamptz
	run("CREATE TABLE ts (x timestamptz PRIMARY KEY, v text)")
	run("INSERT INTO ts VALUES ('2024-01-01 00:00:00+00', 'old')")
	run("INSERT INTO ts SELECT '2024-01-01 01:00:00+01'::timestamptz, 'tz' FROM generate_series(1,2) ON CONFLICT DO NOTHING")
	q("SELECT count(*) FROM ts")
	// NULL in composite key
	run("CREATE TABLE ck (a int, b text, v text, PRIMARY KEY (a, b))")
	run("INSERT INTO ck SELECT g, NULL, 'x' FROM generate_series(1,3) g ON CONFLICT DO NOTHING")
	run("INSERT INTO ck VALUES (1, NULL, 'x') ON CONFLICT DO NOTHING")
	// int32 key, many pieces; compare with RETURNING path
	run("CREATE TABLE i4 (a int PRIMARY KEY, v text)")
	run("CREATE TABLE i4r (a int PRIMARY KEY, v text)")
	run("INSERT INTO i4 SELECT g % 250, 'r' || g FROM generate_series(1, 1000) g ON CONFLICT DO NOTHING")
	run("INSERT INTO i4r SELECT g % 250, 'r' || g FROM generate_series(1, 1000) g ON CONFLICT DO NOTHING RETURNING 1")
	q("SELECT count(*) FROM i4 JOIN i4r USING (a) WHERE i4.v = i4r.v")
	// smallint
	run("CREATE TABLE i2 (a smallint PRIMARY KEY, v text)")
	run("INSERT INTO i2 SELECT (g % 7)::smallint, 'r' FROM generate_series(1, 1000) g ON CONFLICT ON CONSTRAINT i2_pkey DO NOTHING")
	// no pk: VALUES, SELECT, RETURNING
	run("CREATE TABLE np (a int, b text)")
	run("INSERT INTO np VALUES (1,'a'),(1,'a') ON CONFLICT DO NOTHING RETURNING a")
	run("INSERT INTO np SELECT 1, 'a' FROM generate_series(1,300) ON CONFLICT DO NOTHING")
	run("INSERT INTO np SELECT 1, 'a' FROM generate_series(1,300) ON CONFLICT DO NOTHING RETURNING a")
	run("INSERT INTO np SELECT 1, 'a' FROM generate_series(1,3) ON CONFLICT (a) DO NOTHING")
	run("INSERT INTO np SELECT 1, 'a' FROM generate_series(1,3) ON CONFLICT DO UPDATE SET b = 'x'")
	q("SELECT count(*) FROM np")
	run("BEGIN")
	run("INSERT INTO np SELECT 1, 'a' FROM generate_series(1,300) ON CONFLICT DO NOTHING")
	run("COMMIT")
	q("SELECT count(*) FROM np")

	// block: bulk then DO NOTHING overlapping
	run("CREATE TABLE bk (a int, b text, v text, PRIMARY KEY (a, b))")
	run("BEGIN")
	run("INSERT INTO bk SELECT g, 'k', 'first' FROM generate_series(1, 1000) g")
	run("INSERT INTO bk SELECT g, 'k', 'second' FROM generate_series(500, 1500) g ON CONFLICT DO NOTHING")
	run("DELETE FROM bk WHERE a BETWEEN 100 AND 199")
	run("INSERT INTO bk SELECT g, 'k', 'third' FROM generate_series(1, 1600) g ON CONFLICT DO NOTHING")
	q("SELECT v, count(*) FROM bk GROUP BY v ORDER BY v")
	run("COMMIT")
	q("SELECT v, count(*) FROM bk GROUP BY v ORDER BY v")
	q("SELECT count(*), count(DISTINCT a) FROM bk")
	run("FLUSH")
	q("SELECT count(*), count(DISTINCT a) FROM bk")
}
