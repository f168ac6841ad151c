package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// nexmarkQuery is one Nexmark query as a materialized view over the
// generator's sources. The texts are Sluice's own, written from the
// queries' definitions (peer-tests/nexmark/NEXMARK.md); the ones missing
// need SQL Sluice does not have yet (subqueries, CREATE FUNCTION,
// regexp_match, the row number as a column).
type nexmarkQuery struct {
	name    string
	sources []string // bid, auction, person
	sql     string   // the view's query
}

var nexmarkQueries = []nexmarkQuery{
	{"q0", []string{"bid"}, "SELECT auction, bidder, price, date_time, extra FROM bid"},
	{"q1", []string{"bid"}, "SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid"},
	{"q2", []string{"bid"}, "SELECT auction, price FROM bid WHERE auction % 123 = 0"},
	{"q3", []string{"auction", "person"}, "SELECT p.name, p.city, p.state, a.id FROM auction a JOIN person p ON a.seller = p.id " +
		"WHERE a.category = 10 AND p.state IN ('or', 'id', 'ca')"},
	{"q4", []string{"auction", "bid"}, "SELECT q.category, avg(q.final) AS avg_final FROM (" +
		"SELECT a.id, a.category, max(b.price) AS final FROM auction a JOIN bid b ON a.id = b.auction " +
		"WHERE b.date_time BETWEEN a.date_time AND a.expires GROUP BY a.id, a.category) q GROUP BY q.category"},
	{"q5", []string{"bid"}, "SELECT ab.auction, ab.num FROM (SELECT auction, count(*) AS num, window_start AS starttime " +
		"FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) GROUP BY window_start, auction) ab JOIN (" +
		"SELECT max(cb.num) AS maxn, cb.starttime_c FROM (SELECT count(*) AS num, window_start AS starttime_c " +
		"FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) GROUP BY auction, window_start) cb " +
		"GROUP BY cb.starttime_c) mb ON ab.starttime = mb.starttime_c AND ab.num >= mb.maxn"},
	{"q7", []string{"bid"}, "SELECT b.auction, b.price, b.bidder, b.date_time FROM bid b JOIN (SELECT max(price) AS maxprice, " +
		"window_end AS date_time FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_end) b1 " +
		"ON b.price = b1.maxprice WHERE b.date_time BETWEEN b1.date_time - INTERVAL '10' SECOND AND b1.date_time"},
	{"q8", []string{"auction", "person"}, "SELECT p.id, p.name, p.starttime FROM (SELECT id, name, window_start AS starttime, " +
		"window_end AS endtime FROM TUMBLE(person, date_time, INTERVAL '10' SECOND) GROUP BY id, name, window_start, window_end) p " +
		"JOIN (SELECT seller, window_start AS starttime, window_end AS endtime FROM TUMBLE(auction, date_time, INTERVAL '10' SECOND) " +
		"GROUP BY seller, window_start, window_end) a ON p.id = a.seller AND p.starttime = a.starttime AND p.endtime = a.endtime"},
	{"q9", []string{"auction", "bid"}, "SELECT id, item_name, description, initial_bid, reserve, date_time, expires, seller, " +
		"category, auction, bidder, price, bid_date_time FROM (SELECT a.*, b.auction, b.bidder, b.price, " +
		"b.date_time AS bid_date_time, ROW_NUMBER() OVER (PARTITION BY a.id ORDER BY b.price DESC, b.date_time ASC) AS rownum " +
		"FROM auction a, bid b WHERE a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.expires) tmp WHERE rownum <= 1"},
	{"q10", []string{"bid"}, "SELECT auction, bidder, price, date_time, extra, to_char(date_time, 'YYYY-MM-DD') AS day, " +
		"to_char(date_time, 'HH:MI') AS minute FROM bid"},
	{"q16", []string{"bid"}, "SELECT channel, to_char(date_time, 'yyyy-MM-dd') AS day, max(to_char(date_time, 'HH:mm')) AS minute, " +
		"count(*) AS total_bids, count(*) FILTER (WHERE price < 10000) AS rank1_bids, " +
		"count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids, count(*) FILTER (WHERE price >= 1000000) AS rank3_bids, " +
		"count(DISTINCT bidder) AS total_bidders, count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders, " +
		"count(DISTINCT auction) AS total_auctions, count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions " +
		"FROM bid GROUP BY channel, to_char(date_time, 'yyyy-MM-dd')"},
	{"q17", []string{"bid"}, "SELECT auction, to_char(date_time, 'YYYY-MM-DD') AS day, count(*) AS total_bids, " +
		"count(*) FILTER (WHERE price < 10000) AS rank1_bids, min(price) AS min_price, max(price) AS max_price, " +
		"avg(price) AS avg_price, sum(price) AS sum_price FROM bid GROUP BY auction, to_char(date_time, 'YYYY-MM-DD')"},
	{"q18", []string{"bid"}, "SELECT auction, bidder, price, channel, url, date_time, extra FROM (SELECT *, ROW_NUMBER() OVER (" +
		"PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number FROM bid) t WHERE rank_number <= 1"},
	{"q20", []string{"auction", "bid"}, "SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.date_time AS bid_time, " +
		"a.item_name, a.description, a.initial_bid, a.reserve, a.date_time AS auction_time, a.expires, a.seller, a.category " +
		"FROM bid b JOIN auction a ON b.auction = a.id WHERE a.category = 10"},
	{"q22", []string{"bid"}, "SELECT auction, bidder, price, channel, split_part(url, '/', 4) AS dir1, " +
		"split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3 FROM bid"},
}

// ceilingQuery reads the same sources as q and keeps nothing: the
// generator's throughput as a streaming job, the ceiling of any query
// over those sources.
func ceilingQuery(sources []string) nexmarkQuery {
	keep := map[string]string{"bid": "price < 0", "auction": "reserve < 0", "person": "id < 0"}
	var parts []string
	for _, s := range sources {
		parts = append(parts, fmt.Sprintf("SELECT 1 AS one FROM %s WHERE %s", s, keep[s]))
	}
	return nexmarkQuery{name: "ceiling(" + strings.Join(sources, "+") + ")", sources: sources,
		sql: strings.Join(parts, " UNION ALL ")}
}

// sourceDDL declares a Nexmark source of kind, as RisingWave's benchmark
// does, over events events in splits splits, unpaced, with a watermark
// wm behind the newest date_time (none when 0).
func sourceDDL(kind string, events int64, splits int, wm time.Duration) string {
	cols := map[string]string{
		"bid": "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, date_time TIMESTAMP, extra VARCHAR",
		"auction": "id BIGINT, item_name VARCHAR, description VARCHAR, initial_bid BIGINT, reserve BIGINT, date_time TIMESTAMP, " +
			"expires TIMESTAMP, seller BIGINT, category BIGINT, extra VARCHAR",
		"person": "id BIGINT, name VARCHAR, email_address VARCHAR, credit_card VARCHAR, city VARCHAR, state VARCHAR, " +
			"date_time TIMESTAMP, extra VARCHAR",
	}[kind]
	if wm > 0 {
		cols += fmt.Sprintf(", WATERMARK FOR date_time AS date_time - INTERVAL '%d milliseconds'", wm.Milliseconds())
	}
	return fmt.Sprintf("CREATE SOURCE %s (%s) WITH (connector = 'nexmark', nexmark.table.type = '%s', "+
		"nexmark.event.num = '%d', nexmark.split.num = '%d', nexmark.min.event.gap.in.ns = '0')",
		kind, cols, strings.ToUpper(kind[:1])+kind[1:], events, splits)
}

// pickQueries resolves -query (comma-separated names) or -all.
func pickQueries(names string, all bool) ([]nexmarkQuery, error) {
	if all {
		return nexmarkQueries, nil
	}
	var out []nexmarkQuery
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		i := slices.IndexFunc(nexmarkQueries, func(q nexmarkQuery) bool { return q.name == n })
		if i < 0 {
			var known []string
			for _, q := range nexmarkQueries {
				known = append(known, q.name)
			}
			return nil, fmt.Errorf("unknown query %q; the queries are %s", n, strings.Join(known, ", "))
		}
		out = append(out, nexmarkQueries[i])
	}
	return out, nil
}
