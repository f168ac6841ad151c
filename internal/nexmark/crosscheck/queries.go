package crosscheck

import (
	"fmt"
	"regexp"
)

// Query is one view checked against PostgreSQL: its SELECT, and the
// columns to compare it by (a total order, so both sides sort the same
// way; numeric averages rounded on both sides).
type Query struct {
	Name, View, Compare string
}

// Windows sizes the windows of q5, q7 and q8 (Postgres interval text):
// RisingWave's 10 s and 2 s over a million events of the default
// generator, which span 100 s of event time; scaled down with the events
// so that a small run still closes many windows.
type Windows struct {
	Size, Slide string
}

// WindowsFor returns the windows for a run of events events: RisingWave's
// at a million events and more, shrunk in proportion below.
func WindowsFor(events int64) Windows {
	ms := max(10_000*min(events, 1_000_000)/1_000_000, 5)
	return Windows{Size: fmt.Sprintf("%d milliseconds", ms), Slide: fmt.Sprintf("%d milliseconds", max(ms/5, 1))}
}

// Queries are the Nexmark queries (rw_queries, all but q105, whose LIMIT
// cuts ties at random) and a few of Sluice's own over the same tables,
// each as a view's SELECT.
func Queries(w Windows) []Query {
	return []Query{
		{Name: "q0 passthrough", View: "SELECT auction, bidder, price, date_time FROM bid", Compare: "auction, bidder, price, date_time"},
		{Name: "q1 currency", View: "SELECT auction, bidder, 0.908 * price AS price, date_time FROM bid", Compare: "auction, bidder, price, date_time"},
		{Name: "q2 selection", View: "SELECT auction, price FROM bid WHERE auction % 123 = 0", Compare: "auction, price"},
		{Name: "q3 local items", View: "SELECT p.name, p.city, p.state, a.id FROM auction a JOIN person p ON a.seller = p.id " +
			"WHERE a.category = 10 AND p.state IN ('or', 'id', 'ca')", Compare: "id, name, city, state"},
		{Name: "q4 average by category", View: "SELECT q.category, avg(q.final) AS avg FROM (SELECT max(b.price) AS final, a.category " +
			"FROM auction a JOIN bid b ON a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.expires " +
			"GROUP BY a.id, a.category) q GROUP BY q.category", Compare: "category, round(avg, 6)"},
		{Name: "hot bidders", View: "SELECT bidder, count(*) AS n, max(price) AS top, sum(price) AS total FROM bid GROUP BY bidder",
			Compare: "bidder, n, top, total"},
		{Name: "auction bids", View: "SELECT a.id, a.seller, count(*) AS bids, min(b.price) AS low FROM auction a JOIN bid b ON a.id = b.auction " +
			"GROUP BY a.id, a.seller", Compare: "id, seller, bids, low"},
		{Name: "q9 winning bids", View: "SELECT id, item_name, seller, category, auction, bidder, price, bid_date_time FROM (" +
			"SELECT a.*, b.auction, b.bidder, b.price, b.date_time AS bid_date_time, ROW_NUMBER() OVER (PARTITION BY a.id " +
			"ORDER BY b.price DESC, b.date_time ASC, b.bidder) AS rownum FROM auction a, bid b WHERE a.id = b.auction " +
			"AND b.date_time BETWEEN a.date_time AND a.expires) tmp WHERE rownum <= 1", Compare: "id, auction, bidder, price, bid_date_time"},
		// Ties broken by every column: equal rows are indistinguishable.
		{Name: "q18 last bid", View: "SELECT auction, bidder, price, channel, date_time FROM (SELECT *, ROW_NUMBER() OVER (" +
			"PARTITION BY bidder, auction ORDER BY date_time DESC, price DESC, channel, url, extra) AS rank_number FROM bid) t " +
			"WHERE rank_number <= 1", Compare: "auction, bidder, price, channel, date_time"},
		// q6's average over each seller's last ten closed auctions, with
		// ties broken so that both sides pick the same bids.
		{Name: "q6 average selling price by seller", View: "SELECT seller, id, avg(final) OVER (PARTITION BY seller ORDER BY date_time, id " +
			"ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg FROM (SELECT ROW_NUMBER() OVER (PARTITION BY a.id, a.seller " +
			"ORDER BY b.price, b.date_time, b.bidder) AS rank, a.id, a.seller, b.price AS final, b.date_time FROM auction a, bid b " +
			"WHERE a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.expires) q WHERE q.rank <= 1", Compare: "seller, id, round(avg, 6)"},
		{Name: "q10 log to file", View: "SELECT auction, bidder, price, date_time, to_char(date_time, 'YYYY-MM-DD') AS day, " +
			"to_char(date_time, 'HH:MI') AS minute FROM bid", Compare: "auction, bidder, price, date_time, day, minute"},
		{Name: "q14 calculation", View: "SELECT auction, bidder, 0.908 * price AS price, CASE WHEN extract(hour FROM date_time) >= 8 AND " +
			"extract(hour FROM date_time) <= 18 THEN 'dayTime' WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 " +
			"THEN 'nightTime' ELSE 'otherTime' END AS bid_time_type, date_time, count_char(extra, 'c') AS c_counts FROM bid " +
			"WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000", Compare: "auction, bidder, price, bid_time_type, date_time, c_counts"},
		{Name: "q15 bidding statistics", View: "SELECT to_char(date_time, 'YYYY-MM-DD') AS day, count(*) AS total, " +
			"count(*) FILTER (WHERE price < 10000) AS r1, count(DISTINCT bidder) AS bidders, " +
			"count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS r2_bidders, " +
			"count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS r3_auctions FROM bid GROUP BY to_char(date_time, 'YYYY-MM-DD')",
			Compare: "day, total, r1, bidders, r2_bidders, r3_auctions"},
		{Name: "q17 auction statistics", View: "SELECT auction, to_char(date_time, 'YYYY-MM-DD') AS day, count(*) AS total_bids, " +
			"min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price FROM bid " +
			"GROUP BY auction, to_char(date_time, 'YYYY-MM-DD')", Compare: "auction, day, total_bids, min_price, max_price, round(avg_price, 6), sum_price"},
		{Name: "q19 auction top-10 price", View: "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, " +
			"date_time, bidder, channel, url, extra) AS rank_number FROM bid) t WHERE rank_number <= 10",
			Compare: "auction, rank_number, bidder, price, date_time"},
		{Name: "q20 expanded bids", View: "SELECT b.auction, b.bidder, b.price, b.date_time AS bid_time, a.item_name, a.seller FROM bid b " +
			"JOIN auction a ON b.auction = a.id WHERE a.category = 10", Compare: "auction, bidder, price, bid_time, item_name, seller"},
		{Name: "q21 channel id", View: "SELECT auction, bidder, price, channel, CASE WHEN lower(channel) = 'apple' THEN '0' " +
			"WHEN lower(channel) = 'google' THEN '1' WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3' " +
			"ELSE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] END AS channel_id FROM bid " +
			"WHERE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] IS NOT NULL OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')",
			Compare: "auction, bidder, price, channel, channel_id"},
		{Name: "q22 url directories", View: "SELECT auction, bidder, price, split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, " +
			"split_part(url, '/', 6) AS dir3 FROM bid", Compare: "auction, bidder, price, dir1, dir2, dir3"},
		{Name: "q101 highest bid", View: "SELECT a.id AS auction_id, a.item_name, b.max_price FROM auction a LEFT OUTER JOIN (" +
			"SELECT b1.auction, max(b1.price) AS max_price FROM bid b1 GROUP BY b1.auction) b ON a.id = b.auction",
			Compare: "auction_id, item_name, max_price"},
		{Name: "q102 busy auctions", View: "SELECT a.id AS auction_id, count(b.auction) AS bid_count FROM auction a JOIN bid b ON a.id = b.auction " +
			"GROUP BY a.id, a.item_name HAVING count(b.auction) >= (SELECT count(*) / count(DISTINCT auction) FROM bid)",
			Compare: "auction_id, bid_count"},
		{Name: "q103 auctions with 20 bids", View: "SELECT a.id AS auction_id FROM auction a WHERE a.id IN (SELECT b.auction FROM bid b " +
			"GROUP BY b.auction HAVING count(*) >= 20)", Compare: "auction_id"},
		{Name: "q104 auctions without few bids", View: "SELECT a.id AS auction_id FROM auction a WHERE a.id NOT IN (SELECT b.auction FROM bid b " +
			"GROUP BY b.auction HAVING count(*) < 20)", Compare: "auction_id"},
		{Name: "q106 lowest final price", View: "SELECT min(final) AS min_final FROM (SELECT auction.id, max(price) AS final FROM auction, bid " +
			"WHERE bid.auction = auction.id AND bid.date_time BETWEEN auction.date_time AND auction.expires GROUP BY auction.id) f",
			Compare: "min_final"},
		// q5, q7 and q8, over the windows w gives.
		{Name: "q5 hot items", View: "SELECT ab.auction, ab.num, ab.starttime FROM (SELECT auction, count(*) AS num, window_start AS starttime " +
			"FROM " + hop("bid", w.Slide, w.Size) + " GROUP BY window_start, auction) ab JOIN (" +
			"SELECT max(cb.num) AS maxn, cb.starttime_c FROM (SELECT count(*) AS num, window_start AS starttime_c FROM " +
			hop("bid", w.Slide, w.Size) + " GROUP BY auction, window_start) cb GROUP BY cb.starttime_c) mb " +
			"ON ab.starttime = mb.starttime_c AND ab.num >= mb.maxn", Compare: "starttime, auction, num"},
		{Name: "q7 highest bid", View: "SELECT b.auction, b.price, b.bidder, b.date_time FROM bid b JOIN (SELECT max(price) AS maxprice, " +
			"window_end AS date_time FROM " + tumble("bid", w.Size) + " GROUP BY window_end) b1 ON b.price = b1.maxprice " +
			"WHERE b.date_time BETWEEN b1.date_time - INTERVAL '" + w.Size + "' AND b1.date_time",
			Compare: "auction, price, bidder, date_time"},
		{Name: "q8 new users", View: "SELECT p.id, p.name, p.starttime FROM (SELECT id, name, window_start AS starttime, window_end AS endtime " +
			"FROM " + tumble("person", w.Size) + " GROUP BY id, name, window_start, window_end) p JOIN (" +
			"SELECT seller, window_start AS starttime, window_end AS endtime FROM " + tumble("auction", w.Size) +
			" GROUP BY seller, window_start, window_end) a ON p.id = a.seller AND p.starttime = a.starttime AND p.endtime = a.endtime",
			Compare: "id, name, starttime"},
	}
}

// tumble and hop write a window table function call; PGWindows rewrites
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

// PGWindows rewrites a query's TUMBLE and HOP calls for PostgreSQL.
func PGWindows(q string) string {
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
