package session

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/catalog"
)

// bidSource creates a Nexmark bid source of events events, with the
// watermark clause wm (empty: none).
func bidSource(t *testing.T, c *pgx.Conn, name string, events int, wm string) {
	t.Helper()
	if wm != "" {
		wm = ", " + wm
	}
	exec(t, c, fmt.Sprintf(`CREATE SOURCE %s (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP%s)
		WITH (connector = 'nexmark', nexmark.table.type = 'Bid', nexmark.split.num = '3',
		nexmark.event.num = '%d', nexmark.min.event.gap.in.ns = '0')`, name, wm, events))
}

// stateKeys counts the live keys of view's state tables, its own rows
// left out.
func stateKeys(t *testing.T, p *Playground, view string) int {
	t.Helper()
	rel, ok := p.Engine.Catalog().ByName(view)
	if !ok {
		t.Fatalf("no view %s", view)
	}
	n := 0
	for _, id := range rel.Job.StateTables {
		if id == rel.Table.ID {
			continue
		}
		k, err := p.Engine.Store().TableKeyCount(id)
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}

// TestWatermarkWindows runs the same windowed views over a source with a
// watermark and one without: the results agree on every closed window,
// EMIT ON WINDOW CLOSE shows only closed windows (append-only), and the
// watermarked views keep state for the open windows only.
func TestWatermarkWindows(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	// 30 000 events span 3 s of event time: 30 windows of 100 ms, the
	// last 5 or so open behind the 500 ms watermark delay.
	const events = 30000
	bidSource(t, c, "bid", events, "WATERMARK FOR date_time AS date_time - INTERVAL '500 milliseconds'")
	bidSource(t, c, "bidnw", events, "")
	tumble := `SELECT window_start, count(*) AS n, max(price) AS top, sum(price) AS total
		FROM TUMBLE(%s, date_time, INTERVAL '100 milliseconds') GROUP BY window_start`
	exec(t, c, "CREATE MATERIALIZED VIEW tw AS "+fmt.Sprintf(tumble, "bid")+" EMIT ON WINDOW CLOSE")
	exec(t, c, "CREATE MATERIALIZED VIEW tc AS "+fmt.Sprintf(tumble, "bid"))
	exec(t, c, "CREATE MATERIALIZED VIEW tn AS "+fmt.Sprintf(tumble, "bidnw"))
	hot := `SELECT a.auction, a.num, a.starttime FROM
		(SELECT auction, count(*) AS num, window_start AS starttime
		 FROM HOP(%[1]s, date_time, INTERVAL '100 milliseconds', INTERVAL '300 milliseconds') GROUP BY window_start, auction) a
		JOIN (SELECT max(num) AS maxn, starttime_c FROM
		 (SELECT count(*) AS num, window_start AS starttime_c
		  FROM HOP(%[1]s, date_time, INTERVAL '100 milliseconds', INTERVAL '300 milliseconds') GROUP BY auction, window_start) cb
		 GROUP BY starttime_c) m
		ON a.starttime = m.starttime_c AND a.num >= m.maxn`
	exec(t, c, "CREATE MATERIALIZED VIEW hw AS "+fmt.Sprintf(hot, "bid"))
	exec(t, c, "CREATE MATERIALIZED VIEW hn AS "+fmt.Sprintf(hot, "bidnw"))
	bids, _ := bidTotals(t, events)
	// Five views read 210 000 events between them: slow under -race.
	const long = 3 * time.Minute
	waitRowFor(t, c, "SELECT sum(n) FROM tn", fmt.Sprint(bids), long)
	waitRowFor(t, c, "SELECT sum(n) FROM tc", fmt.Sprint(bids), long)
	waitRowFor(t, c, "SELECT count(*) FROM (SELECT * FROM hw EXCEPT SELECT * FROM hn) d", "0", long)
	waitRowFor(t, c, "SELECT count(*) FROM (SELECT * FROM hn EXCEPT SELECT * FROM hw) d", "0", long)
	waitRowFor(t, c, "SELECT count(*) FROM (SELECT * FROM tc EXCEPT SELECT * FROM tn) d", "0", long)

	// The last 500 ms of event time are behind no watermark yet: their
	// windows are open, the earlier ones closed and emitted once each.
	last := queryStrings(t, c, "SELECT max(window_start) FROM tn")[0]
	closed := mustAtoi(t, queryStrings(t, c, "SELECT count(*) FROM tn WHERE window_start < TIMESTAMP '"+last+"' - INTERVAL '0.6' SECOND")[0])
	open := mustAtoi(t, queryStrings(t, c, "SELECT count(*) FROM tn WHERE window_start >= TIMESTAMP '"+last+"' - INTERVAL '0.5' SECOND")[0])
	if closed == 0 || open == 0 {
		t.Fatalf("%d closed windows and %d open: the test's events span too little time", closed, open)
	}
	// tw reads the source by itself and may still be catching up.
	deadline := time.Now().Add(long)
	got := 0
	for got = mustAtoi(t, queryStrings(t, c, "SELECT count(*) FROM tw")[0]); got < closed && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		got = mustAtoi(t, queryStrings(t, c, "SELECT count(*) FROM tw")[0])
	}
	if got < closed || got >= closed+open {
		t.Fatalf("EMIT ON WINDOW CLOSE emitted %d windows; %d are closed, %d open", got, closed, open)
	}
	waitRowFor(t, c, "SELECT count(*) FROM (SELECT * FROM tw EXCEPT SELECT * FROM tn) d", "0", long)

	// State: the watermarked views keep their open windows; the others
	// every window they ever saw.
	for _, pair := range [][2]string{{"tc", "tn"}, {"tw", "tn"}, {"hw", "hn"}} {
		w, n := stateKeys(t, p, pair[0]), stateKeys(t, p, pair[1])
		t.Logf("state keys: %s %d, %s %d", pair[0], w, pair[1], n)
		if w*3 > n {
			t.Errorf("%s keeps %d state keys, %s (no watermark) %d: closed windows are not cleaned", pair[0], w, pair[1], n)
		}
	}
	explain := strings.Join(queryStrings(t, c, "EXPLAIN CREATE MATERIALIZED VIEW x AS "+fmt.Sprintf(tumble, "bid")+" EMIT ON WINDOW CLOSE"), "\n")
	for _, want := range []string{"emit on window close", "WatermarkFilter { column: $3", "output watermarks: [$0], append only"} {
		if !strings.Contains(explain, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, explain)
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWatermarkErrors(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE plain (ts TIMESTAMP, v INT)")
	for sql, code := range map[string]string{
		"CREATE TABLE t1 (ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)":                          "0A000",
		"CREATE TABLE t2 (ts TIMESTAMP, WATERMARK FOR nope AS ts) APPEND ONLY":                                  "42703",
		"CREATE TABLE t3 (ts VARCHAR, WATERMARK FOR ts AS ts) APPEND ONLY":                                      "42804",
		"CREATE TABLE t4 (ts TIMESTAMP, WATERMARK FOR ts AS 1) APPEND ONLY":                                     "42804",
		"CREATE TABLE t5 (ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, v INT) APPEND ONLY":       "",
		"CREATE MATERIALIZED VIEW v1 AS SELECT v, count(*) FROM plain GROUP BY v EMIT ON WINDOW CLOSE":          "0A000",
		"CREATE TABLE t6 (ts TIMESTAMP, WATERMARK FOR ts AS ts - (random() * INTERVAL '1 second')) APPEND ONLY": "0A000",
		"CREATE TABLE t7 (ts TIMESTAMP, WATERMARK FOR ts AS now()::timestamp) APPEND ONLY":                      "0A000",
		// A connector table with a key upserts: its rows can move back.
		`CREATE TABLE t8 (auction BIGINT PRIMARY KEY, date_time TIMESTAMP, WATERMARK FOR date_time AS date_time) APPEND ONLY
			WITH (connector = 'nexmark', nexmark.table.type = 'Bid', nexmark.event.num = '10')`: "0A000",
		"CREATE MATERIALIZED VIEW v2 AS SELECT v FROM plain EMIT ON WINDOW CLOSE": "0A000",
	} {
		if code == "" {
			exec(t, c, sql)
			continue
		}
		wantCode(t, c, sql, code)
	}
	for _, name := range []string{"t1", "t2", "t3", "t4", "t6", "t7", "t8", "v1", "v2"} {
		if _, ok := p.Engine.Catalog().ByName(name); ok {
			t.Errorf("%s was created by a failed statement", name)
		}
	}
	rel, _ := p.Engine.Catalog().ByName("t5")
	if rel == nil || rel.Watermark == nil || rel.Watermark.Col != 0 || rel.Kind != catalog.KindTable {
		t.Fatalf("t5's watermark: %+v", rel)
	}
}

// TestWatermarkAppendOnlyTable: a table's watermark drops late inserts
// before they are stored, and a view over the table closes its windows
// once the table's watermark passes them.
func TestWatermarkAppendOnlyTable(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE ev (ts TIMESTAMP, v INT, WATERMARK FOR ts AS ts - INTERVAL '10' SECOND) APPEND ONLY")
	exec(t, c, `CREATE MATERIALIZED VIEW w AS SELECT window_start, sum(v) AS s FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE)
		GROUP BY window_start EMIT ON WINDOW CLOSE`)
	exec(t, c, "INSERT INTO ev VALUES ('2024-01-01 00:00:05', 1), ('2024-01-01 00:00:50', 2)")
	exec(t, c, "INSERT INTO ev VALUES ('2024-01-01 00:01:30', 4)")
	exec(t, c, "FLUSH")
	// The watermark, 00:01:20, closes the first window only.
	waitRow(t, c, "SELECT string_agg(window_start::text || '=' || s::text, ',') FROM w", "2024-01-01 00:00:00=3")
	exec(t, c, "INSERT INTO ev VALUES ('2024-01-01 00:00:10', 100)") // late: dropped
	exec(t, c, "INSERT INTO ev VALUES ('2024-01-01 00:02:15', 8)")   // watermark 00:02:05 closes [00:01, 00:02)
	exec(t, c, "FLUSH")
	waitRow(t, c, "SELECT string_agg(window_start::text || '=' || s::text, ',' ORDER BY window_start) FROM w",
		"2024-01-01 00:00:00=3,2024-01-01 00:01:00=4")
	waitRow(t, c, "SELECT count(*), sum(v) FROM ev", "4 15")
	wantCode(t, c, "DELETE FROM ev", "0A000")
}
