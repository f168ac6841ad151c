package nexmark_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/nexmark"
	"github.com/sluice-db/sluice/internal/sql/session"
	"github.com/sluice-db/sluice/internal/sqllogic/pgtest"
)

// differentialEvents is how many events the differential test loads: a
// few seconds of the generator's default rate, enough for every hot key,
// the auctions' expiry windows and the joins to matter.
const differentialEvents = 20_000

// The Nexmark queries (rw_queries, all but q105, whose LIMIT cuts ties at
// random), each as a view's SELECT
// and the columns to compare it by (a total order, so both sides sort
// the same way). Numeric averages are rounded on both sides.
var differentialQueries = []struct{ name, view, compare string }{
	{"q0 passthrough", "SELECT auction, bidder, price, date_time FROM bid", "auction, bidder, price, date_time"},
	{"q1 currency", "SELECT auction, bidder, 0.908 * price AS price, date_time FROM bid", "auction, bidder, price, date_time"},
	{"q2 selection", "SELECT auction, price FROM bid WHERE auction % 123 = 0", "auction, price"},
	{"q3 local items", "SELECT p.name, p.city, p.state, a.id FROM auction a JOIN person p ON a.seller = p.id " +
		"WHERE a.category = 10 AND p.state IN ('or', 'id', 'ca')", "id, name, city, state"},
	{"q4 average by category", "SELECT q.category, avg(q.final) AS avg FROM (SELECT max(b.price) AS final, a.category " +
		"FROM auction a JOIN bid b ON a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.expires " +
		"GROUP BY a.id, a.category) q GROUP BY q.category", "category, round(avg, 6)"},
	{"hot bidders", "SELECT bidder, count(*) AS n, max(price) AS top, sum(price) AS total FROM bid GROUP BY bidder",
		"bidder, n, top, total"},
	{"auction bids", "SELECT a.id, a.seller, count(*) AS bids, min(b.price) AS low FROM auction a JOIN bid b ON a.id = b.auction " +
		"GROUP BY a.id, a.seller", "id, seller, bids, low"},
	{"q9 winning bids", "SELECT id, item_name, seller, category, auction, bidder, price, bid_date_time FROM (" +
		"SELECT a.*, b.auction, b.bidder, b.price, b.date_time AS bid_date_time, ROW_NUMBER() OVER (PARTITION BY a.id " +
		"ORDER BY b.price DESC, b.date_time ASC, b.bidder) AS rownum FROM auction a, bid b WHERE a.id = b.auction " +
		"AND b.date_time BETWEEN a.date_time AND a.expires) tmp WHERE rownum <= 1", "id, auction, bidder, price, bid_date_time"},
	// Ties broken by every column: equal rows are indistinguishable.
	{"q18 last bid", "SELECT auction, bidder, price, channel, date_time FROM (SELECT *, ROW_NUMBER() OVER (" +
		"PARTITION BY bidder, auction ORDER BY date_time DESC, price DESC, channel, url, extra) AS rank_number FROM bid) t " +
		"WHERE rank_number <= 1", "auction, bidder, price, channel, date_time"},
	// q6's average over each seller's last ten closed auctions, with
	// ties broken so that both sides pick the same bids.
	{"q6 average selling price by seller", "SELECT seller, id, avg(final) OVER (PARTITION BY seller ORDER BY date_time, id " +
		"ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg FROM (SELECT ROW_NUMBER() OVER (PARTITION BY a.id, a.seller " +
		"ORDER BY b.price, b.date_time, b.bidder) AS rank, a.id, a.seller, b.price AS final, b.date_time FROM auction a, bid b " +
		"WHERE a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.expires) q WHERE q.rank <= 1", "seller, id, round(avg, 6)"},
	{"q10 log to file", "SELECT auction, bidder, price, date_time, to_char(date_time, 'YYYY-MM-DD') AS day, " +
		"to_char(date_time, 'HH:MI') AS minute FROM bid", "auction, bidder, price, date_time, day, minute"},
	{"q14 calculation", "SELECT auction, bidder, 0.908 * price AS price, CASE WHEN extract(hour FROM date_time) >= 8 AND " +
		"extract(hour FROM date_time) <= 18 THEN 'dayTime' WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 " +
		"THEN 'nightTime' ELSE 'otherTime' END AS bid_time_type, date_time, count_char(extra, 'c') AS c_counts FROM bid " +
		"WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000", "auction, bidder, price, bid_time_type, date_time, c_counts"},
	{"q15 bidding statistics", "SELECT to_char(date_time, 'YYYY-MM-DD') AS day, count(*) AS total, " +
		"count(*) FILTER (WHERE price < 10000) AS r1, count(DISTINCT bidder) AS bidders, " +
		"count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS r2_bidders, " +
		"count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS r3_auctions FROM bid GROUP BY to_char(date_time, 'YYYY-MM-DD')",
		"day, total, r1, bidders, r2_bidders, r3_auctions"},
	{"q17 auction statistics", "SELECT auction, to_char(date_time, 'YYYY-MM-DD') AS day, count(*) AS total_bids, " +
		"min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price FROM bid " +
		"GROUP BY auction, to_char(date_time, 'YYYY-MM-DD')", "auction, day, total_bids, min_price, max_price, round(avg_price, 6), sum_price"},
	{"q19 auction top-10 price", "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, " +
		"date_time, bidder, channel, url, extra) AS rank_number FROM bid) t WHERE rank_number <= 10",
		"auction, rank_number, bidder, price, date_time"},
	{"q20 expanded bids", "SELECT b.auction, b.bidder, b.price, b.date_time AS bid_time, a.item_name, a.seller FROM bid b " +
		"JOIN auction a ON b.auction = a.id WHERE a.category = 10", "auction, bidder, price, bid_time, item_name, seller"},
	{"q21 channel id", "SELECT auction, bidder, price, channel, CASE WHEN lower(channel) = 'apple' THEN '0' " +
		"WHEN lower(channel) = 'google' THEN '1' WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3' " +
		"ELSE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] END AS channel_id FROM bid " +
		"WHERE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] IS NOT NULL OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')",
		"auction, bidder, price, channel, channel_id"},
	{"q22 url directories", "SELECT auction, bidder, price, split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, " +
		"split_part(url, '/', 6) AS dir3 FROM bid", "auction, bidder, price, dir1, dir2, dir3"},
	{"q101 highest bid", "SELECT a.id AS auction_id, a.item_name, b.max_price FROM auction a LEFT OUTER JOIN (" +
		"SELECT b1.auction, max(b1.price) AS max_price FROM bid b1 GROUP BY b1.auction) b ON a.id = b.auction",
		"auction_id, item_name, max_price"},
	{"q102 busy auctions", "SELECT a.id AS auction_id, count(b.auction) AS bid_count FROM auction a JOIN bid b ON a.id = b.auction " +
		"GROUP BY a.id, a.item_name HAVING count(b.auction) >= (SELECT count(*) / count(DISTINCT auction) FROM bid)",
		"auction_id, bid_count"},
	{"q103 auctions with 20 bids", "SELECT a.id AS auction_id FROM auction a WHERE a.id IN (SELECT b.auction FROM bid b " +
		"GROUP BY b.auction HAVING count(*) >= 20)", "auction_id"},
	{"q104 auctions without few bids", "SELECT a.id AS auction_id FROM auction a WHERE a.id NOT IN (SELECT b.auction FROM bid b " +
		"GROUP BY b.auction HAVING count(*) < 20)", "auction_id"},
	{"q106 lowest final price", "SELECT min(final) AS min_final FROM (SELECT auction.id, max(price) AS final FROM auction, bid " +
		"WHERE bid.auction = auction.id AND bid.date_time BETWEEN auction.date_time AND auction.expires GROUP BY auction.id) f",
		"min_final"},
	// q5, q7 and q8 with their windows scaled down a hundredfold: the
	// events span two seconds of event time.
	{"q5 hot items", "SELECT ab.auction, ab.num, ab.starttime FROM (SELECT auction, count(*) AS num, window_start AS starttime " +
		"FROM " + hop("bid", "20 milliseconds", "100 milliseconds") + " GROUP BY window_start, auction) ab JOIN (" +
		"SELECT max(cb.num) AS maxn, cb.starttime_c FROM (SELECT count(*) AS num, window_start AS starttime_c FROM " +
		hop("bid", "20 milliseconds", "100 milliseconds") + " GROUP BY auction, window_start) cb GROUP BY cb.starttime_c) mb " +
		"ON ab.starttime = mb.starttime_c AND ab.num >= mb.maxn", "starttime, auction, num"},
	{"q7 highest bid", "SELECT b.auction, b.price, b.bidder, b.date_time FROM bid b JOIN (SELECT max(price) AS maxprice, " +
		"window_end AS date_time FROM " + tumble("bid", "100 milliseconds") + " GROUP BY window_end) b1 ON b.price = b1.maxprice " +
		"WHERE b.date_time BETWEEN b1.date_time - INTERVAL '100 milliseconds' AND b1.date_time",
		"auction, price, bidder, date_time"},
	{"q8 new users", "SELECT p.id, p.name, p.starttime FROM (SELECT id, name, window_start AS starttime, window_end AS endtime " +
		"FROM " + tumble("person", "100 milliseconds") + " GROUP BY id, name, window_start, window_end) p JOIN (" +
		"SELECT seller, window_start AS starttime, window_end AS endtime FROM " + tumble("auction", "100 milliseconds") +
		" GROUP BY seller, window_start, window_end) a ON p.id = a.seller AND p.starttime = a.starttime AND p.endtime = a.endtime",
		"id, name, starttime"},
}

// tumble and hop write a window table function call; pgWindows rewrites
// them for PostgreSQL, which has none: TUMBLE as date_bin from the Unix
// epoch, HOP as each of its windows from generate_series, each named
// after its relation as the function's columns are.
func tumble(rel, size string) string {
	return fmt.Sprintf("TUMBLE(%s, date_time, INTERVAL '%s')", rel, size)
}

func hop(rel, slide, size string) string {
	return fmt.Sprintf("HOP(%s, date_time, INTERVAL '%s', INTERVAL '%s')", rel, slide, size)
}

var windowCall = regexp.MustCompile(`(TUMBLE|HOP)\((\w+), date_time, INTERVAL '([^']+)'(?:, INTERVAL '([^']+)')?\)`)

func pgWindows(q string) string {
	return windowCall.ReplaceAllStringFunc(q, func(call string) string {
		m := windowCall.FindStringSubmatch(call)
		if m[1] == "TUMBLE" {
			return fmt.Sprintf("(SELECT w.*, date_bin('%[2]s', w.date_time, '1970-01-01') AS window_start, "+
				"date_bin('%[2]s', w.date_time, '1970-01-01') + INTERVAL '%[2]s' AS window_end FROM %[1]s w) AS %[1]s", m[2], m[3])
		}
		return fmt.Sprintf("(SELECT w.*, s AS window_start, s + INTERVAL '%[3]s' AS window_end FROM %[1]s w, "+
			"LATERAL (SELECT date_bin('%[2]s', w.date_time, '1970-01-01') - k * INTERVAL '%[2]s' AS s "+
			"FROM generate_series(0, (EXTRACT(epoch FROM INTERVAL '%[3]s') / EXTRACT(epoch FROM INTERVAL '%[2]s'))::int - 1) k) h) AS %[1]s",
			m[2], m[3], m[4])
	})
}

// TestViewsEqualPostgres feeds the same generated events, then the same
// updates and deletes, to PostgreSQL and Sluice, and checks that each view
// Sluice maintains holds what PostgreSQL's query over the same rows
// returns, halfway and at the end.
func TestViewsEqualPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and an engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg, err := pgx.Connect(ctx, pgtest.StartPostgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	p, err := session.StartPlayground(ctx, engine.Options{Dir: t.TempDir(), BarrierInterval: 50 * time.Millisecond}, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	sl, err := pgx.Connect(ctx, p.Server.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close(ctx)

	g, err := nexmark.NewGenerator(nexmark.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*pgx.Conn{pg, sl} {
		for _, ddl := range nexmark.CreateTable {
			exec(ctx, t, c, ddl)
		}
		exec(ctx, t, c, "CREATE FUNCTION count_char(s varchar, c varchar) RETURNS int LANGUAGE SQL AS "+
			"$$SELECT length(s) - length(replace(s, c, ''))$$")
	}
	// The views exist before any event, so every row reaches them as a
	// change: four loads, then updates and deletes that move rows between
	// groups, join partners and filters.
	for i, q := range differentialQueries {
		exec(ctx, t, sl, fmt.Sprintf("CREATE MATERIALIZED VIEW v%d AS %s", i, q.view))
	}
	const loads = 4
	for l := range int64(loads) {
		rows := g.Rows(l*differentialEvents/loads, (l+1)*differentialEvents/loads, nexmark.COPY)
		for _, c := range []*pgx.Conn{pg, sl} {
			for k := range rows {
				if _, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(rows[k]), "COPY "+nexmark.Tables[k]+" FROM STDIN"); err != nil {
					t.Fatalf("COPY %s: %v", nexmark.Tables[k], err)
				}
			}
		}
		if l == 1 {
			compareViews(ctx, t, pg, sl, "after half the events")
		}
	}
	for _, c := range []*pgx.Conn{pg, sl} {
		exec(ctx, t, c, "DELETE FROM bid WHERE channel = 'Apple' OR price < 1000")
		exec(ctx, t, c, "UPDATE auction SET category = 10 WHERE id % 7 = 0")
		exec(ctx, t, c, "UPDATE person SET state = 'or' WHERE id % 5 = 0")
		exec(ctx, t, c, "UPDATE bid SET bidder = bidder + 1, price = price * 2 WHERE auction % 3 = 0")
	}
	compareViews(ctx, t, pg, sl, "after the updates and deletes")
}

// compareViews checks each of Sluice's views against PostgreSQL's query.
func compareViews(ctx context.Context, t *testing.T, pg, sl *pgx.Conn, when string) {
	t.Helper()
	exec(ctx, t, sl, "FLUSH")
	for i, q := range differentialQueries {
		want := query(ctx, t, pg, fmt.Sprintf("SELECT %s FROM (%s) v ORDER BY %s", q.compare, pgWindows(q.view), q.compare))
		got := query(ctx, t, sl, fmt.Sprintf("SELECT %s FROM v%d ORDER BY %s", q.compare, i, q.compare))
		if len(want) == 0 {
			t.Errorf("%s, %s: PostgreSQL returns no rows; the events do not exercise it", when, q.name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s, %s: Sluice's view has %d rows, PostgreSQL's query %d; first difference:\n%s", when, q.name, len(got), len(want), firstDiff(got, want))
		}
	}
}

func exec(ctx context.Context, t *testing.T, c *pgx.Conn, q string) {
	t.Helper()
	if _, err := c.Exec(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// query returns each row as its columns' text joined by '|'.
func query(ctx context.Context, t *testing.T, c *pgx.Conn, q string) []string {
	t.Helper()
	rs, err := c.Query(ctx, q, pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for rs.Next() {
		var cols []string
		for _, v := range rs.RawValues() {
			cols = append(cols, string(v))
		}
		out = append(out, strings.Join(cols, "|"))
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("  row %d: sluice %q\n  row %d: postgres %q", i, g, i, w)
		}
	}
	return "  (none)"
}
