package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/nexmark"
)

// waitRow polls sql until it returns want (one row, text form), or fails
// after a generous deadline.
func waitRow(t *testing.T, c *pgx.Conn, sql, want string) {
	t.Helper()
	waitRowFor(t, c, sql, want, 30*time.Second)
}

// waitRowFor is waitRow with its own deadline.
func waitRowFor(t *testing.T, c *pgx.Conn, sql, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	var got []string
	for time.Now().Before(deadline) {
		if got = queryStrings(t, c, sql); len(got) == 1 && got[0] == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: %v, want %s", sql, got, want)
}

// bidTotals counts the bids among the first events and sums their prices.
func bidTotals(t *testing.T, events int64) (int64, int64) {
	g, err := nexmark.NewGenerator(nexmark.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var n, sum int64
	for i := range events {
		if e := g.Event(i); e.Kind == nexmark.KindBid {
			n, sum = n+1, sum+e.Bid.Price
		}
	}
	return n, sum
}

func TestSourceFeedsViews(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, `CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
		date_time TIMESTAMP, extra VARCHAR) WITH (connector = 'nexmark', nexmark.table.type = 'Bid',
		nexmark.split.num = '3', nexmark.event.num = '20000', nexmark.min.event.gap.in.ns = '0') FORMAT PLAIN ENCODE JSON`)
	exec(t, c, `CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(price) AS s FROM bid`)
	exec(t, c, `CREATE MATERIALIZED VIEW hot AS SELECT auction, count(*) AS n FROM bid GROUP BY auction`)
	n, sum := bidTotals(t, 20000)
	waitRow(t, c, "SELECT n, s FROM totals", fmt.Sprintf("%d %d", n, sum))
	waitRow(t, c, "SELECT sum(n) FROM hot", fmt.Sprint(n))

	if got := queryStrings(t, c, "SHOW SOURCES"); strings.Join(got, ",") != "bid" {
		t.Fatalf("SHOW SOURCES: %v", got)
	}
	if got := queryStrings(t, c, "SHOW CREATE SOURCE bid"); len(got) != 1 || !strings.HasPrefix(got[0], "public.bid CREATE SOURCE bid (auction") {
		t.Fatalf("SHOW CREATE SOURCE: %q", got)
	}
	wantCode(t, c, "SHOW CREATE TABLE bid", "42809")
	wantCode(t, c, "SELECT * FROM bid", "0A000")
	wantCode(t, c, "INSERT INTO bid VALUES (1, 1, 1, 'a', 'b', now(), 'c')", "42809")
	wantCode(t, c, "DROP TABLE bid", "42809")
	wantCode(t, c, "DROP SOURCE bid", "2BP01")
	exec(t, c, "DROP SOURCE bid CASCADE")
	if got := queryStrings(t, c, "SHOW MATERIALIZED VIEWS"); len(got) != 0 {
		t.Fatalf("views left after DROP SOURCE … CASCADE: %v", got)
	}
	exec(t, c, "DROP SOURCE IF EXISTS bid")
}

func TestSourceOptionErrors(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	for sql, code := range map[string]string{
		"CREATE SOURCE s (price BIGINT) WITH (connector = 'nexmark', nexmark.table.type = 'Bid', foo = 'bar')": "22023",
		"CREATE SOURCE s (price BIGINT) WITH (connector = 'nexmark', nexmark.table.typ = 'Bid')":               "0A000",
		"CREATE SOURCE s (price BIGINT) WITH (connector = 'nope')":                                             "22023",
		"CREATE SOURCE s (price BIGINT) WITH (connector = 'kafka', topic = 't')":                               "0A000",
		"CREATE SOURCE s (price BIGINT)":                                                                       "22023",
		"CREATE SOURCE s (price BIGINT PRIMARY KEY) WITH (connector = 'nexmark', nexmark.table.type = 'Bid')":  "0A000",
		"CREATE SOURCE s (a INT) WITH (connector = 'nexmark', nexmark.table.type = 'Bid')":                     "42703",
		"CREATE TABLE s (a INT) WITH (connector = 'datagen', fields.b.kind = 'sequence')":                      "22023",
		"CREATE TABLE s (a INT) WITH (fillfactor = 70)":                                                        "0A000",
		"CREATE TABLE s (a INT) WITH (foo = 1)":                                                                "22023",
		"CREATE TABLE s (a INT) WITH (connector = 'datagen') FORMAT UPSERT ENCODE AVRO":                        "0A000",
	} {
		wantCode(t, c, sql, code)
	}
	exec(t, c, "CREATE TABLE ok (a INT) WITH (oids = false)")
	if got := queryStrings(t, c, "SHOW SOURCES"); len(got) != 0 {
		t.Fatalf("a failed CREATE SOURCE left %v", got)
	}
}

func TestTableWithConnector(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, `CREATE TABLE seq (id INT PRIMARY KEY, v DOUBLE PRECISION, s VARCHAR) WITH (connector = 'datagen',
		fields.id.kind = 'sequence', fields.id.start = '1', fields.id.end = '500', fields.s.length = '4',
		datagen.split.num = '3', datagen.rows.per.second = '1000000')`)
	waitRow(t, c, "SELECT count(*), min(id), max(id), count(DISTINCT id), min(length(s)) FROM seq", "500 1 500 500 4")
	exec(t, c, "INSERT INTO seq VALUES (1000, 1.5, 'mine')")
	exec(t, c, "UPDATE seq SET s = 'upd' WHERE id = 7")
	waitRow(t, c, "SELECT count(*), string_agg(s, ',' ORDER BY id) FILTER (WHERE id IN (7, 1000)) FROM seq", "501 upd,mine")

	exec(t, c, `CREATE TABLE dg (v INT) WITH (connector = 'datagen', fields.v.min = '1', fields.v.max = '3',
		datagen.rows.per.second = '100000')`)
	wantCode(t, c, "INSERT INTO dg VALUES (1)", "0A000")
	wantCode(t, c, "DELETE FROM dg", "0A000")
	deadline := time.Now().Add(30 * time.Second)
	for queryStrings(t, c, "SELECT count(*) >= 100, min(v), max(v) FROM dg")[0] != "t 1 3" {
		if time.Now().After(deadline) {
			t.Fatalf("dg: %v", queryStrings(t, c, "SELECT count(*), min(v), max(v) FROM dg"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSourceJobPausesAndDropsAtOnce(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	// 2 000 events a second: the view grows steadily.
	exec(t, c, `CREATE SOURCE bid (price BIGINT) WITH (connector = 'nexmark', nexmark.table.type = 'Bid',
		nexmark.min.event.gap.in.ns = '500000')`)
	exec(t, c, "CREATE MATERIALIZED VIEW n AS SELECT count(*) AS n FROM bid")
	count := func() string { return queryStrings(t, c, "SELECT n FROM n")[0] }
	deadline := time.Now().Add(30 * time.Second)
	for count() == "0" {
		if time.Now().After(deadline) {
			t.Fatal("the view never grew")
		}
		time.Sleep(10 * time.Millisecond)
	}
	exec(t, c, "ALTER MATERIALIZED VIEW n PAUSE")
	exec(t, c, "FLUSH")
	paused := count()
	time.Sleep(150 * time.Millisecond)
	exec(t, c, "FLUSH")
	if got := count(); got != paused {
		t.Fatalf("a paused job grew from %s to %s", paused, got)
	}
	exec(t, c, "ALTER MATERIALIZED VIEW n RESUME")
	deadline = time.Now().Add(30 * time.Second)
	for count() == paused {
		if time.Now().After(deadline) {
			t.Fatal("the resumed view never grew")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "DROP SOURCE bid CASCADE"); err != nil {
		t.Fatal(err)
	}
}

// A keyed table fed by a connector upserts: the connector writes keys it
// never read, so a second row of a key replaces the first, in the table
// and in every view over it.
func TestConnectorTableUpserts(t *testing.T) {
	p := startTrustedPlayground(t, engine.Options{BarrierInterval: 5 * time.Millisecond, Parallelism: 2, ChunkSize: 64})
	c := connect(t, p)
	exec(t, c, `CREATE TABLE r (id INT PRIMARY KEY, v INT) WITH (connector = 'datagen', fields.id.min = '0',
		fields.id.max = '3', datagen.rows.per.second = '2000')`)
	exec(t, c, "CREATE MATERIALIZED VIEW rc AS SELECT count(*) AS n, count(DISTINCT id) AS d FROM r")
	time.Sleep(200 * time.Millisecond)
	exec(t, c, "INSERT INTO r VALUES (2, -1) ON CONFLICT (id) DO UPDATE SET v = excluded.v")
	exec(t, c, "FLUSH")
	waitRow(t, c, "SELECT count(*) FROM r", "4")
	waitRow(t, c, "SELECT n, d FROM rc", "4 4")
}
