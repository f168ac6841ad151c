package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// nexmarkQuery is one Nexmark query as a materialized view over the
// generator's sources. The texts are Sluice's own, written from the
// queries' definitions (peer-tests/nexmark/NEXMARK.md) and RisingWave's
// versions (rw_queries). Left out: q11 and q12 (session windows and
// processing time), q13 (a side input file) and q105 (LIMIT over tied
// counts); q14's count_char function is written inline, as Sluice inlines
// SQL functions anyway.
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
	{"q6", []string{"auction", "bid"}, "SELECT q.seller, avg(q.final) OVER (PARTITION BY q.seller ORDER BY q.date_time " +
		"ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg FROM (SELECT ROW_NUMBER() OVER (PARTITION BY a.id, a.seller " +
		"ORDER BY b.price) AS rank, a.seller, b.price AS final, b.date_time FROM auction a, bid b WHERE a.id = b.auction " +
		"AND b.date_time BETWEEN a.date_time AND a.expires) q WHERE q.rank <= 1"},
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
	{"q14", []string{"bid"}, "SELECT auction, bidder, 0.908 * price AS price, CASE WHEN extract(hour FROM date_time) >= 8 " +
		"AND extract(hour FROM date_time) <= 18 THEN 'dayTime' WHEN extract(hour FROM date_time) <= 6 OR " +
		"extract(hour FROM date_time) >= 20 THEN 'nightTime' ELSE 'otherTime' END AS bidtimetype, date_time, " +
		"length(extra) - length(replace(extra, 'c', '')) AS c_counts FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000"},
	{"q15", []string{"bid"}, "SELECT to_char(date_time, 'YYYY-MM-DD') AS day, count(*) AS total_bids, " +
		"count(*) FILTER (WHERE price < 10000) AS rank1_bids, count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids, " +
		"count(*) FILTER (WHERE price >= 1000000) AS rank3_bids, count(DISTINCT bidder) AS total_bidders, " +
		"count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders, " +
		"count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders, " +
		"count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders, count(DISTINCT auction) AS total_auctions, " +
		"count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions, " +
		"count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions, " +
		"count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions FROM bid GROUP BY to_char(date_time, 'YYYY-MM-DD')"},
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
	{"q19", []string{"bid"}, "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number " +
		"FROM bid) t WHERE rank_number <= 10"},
	{"q20", []string{"auction", "bid"}, "SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.date_time AS bid_time, " +
		"a.item_name, a.description, a.initial_bid, a.reserve, a.date_time AS auction_time, a.expires, a.seller, a.category " +
		"FROM bid b JOIN auction a ON b.auction = a.id WHERE a.category = 10"},
	{"q21", []string{"bid"}, "SELECT auction, bidder, price, channel, CASE WHEN lower(channel) = 'apple' THEN '0' " +
		"WHEN lower(channel) = 'google' THEN '1' WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3' " +
		"ELSE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] END AS channel_id FROM bid WHERE " +
		"(regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] IS NOT NULL OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')"},
	{"q22", []string{"bid"}, "SELECT auction, bidder, price, channel, split_part(url, '/', 4) AS dir1, " +
		"split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3 FROM bid"},
	{"q101", []string{"auction", "bid"}, "SELECT a.id AS auction_id, a.item_name AS auction_item_name, b.max_price AS current_highest_bid " +
		"FROM auction a LEFT OUTER JOIN (SELECT b1.auction, max(b1.price) AS max_price FROM bid b1 GROUP BY b1.auction) b ON a.id = b.auction"},
	{"q102", []string{"auction", "bid"}, "SELECT a.id AS auction_id, a.item_name AS auction_item_name, count(b.auction) AS bid_count " +
		"FROM auction a JOIN bid b ON a.id = b.auction GROUP BY a.id, a.item_name " +
		"HAVING count(b.auction) >= (SELECT count(*) / count(DISTINCT auction) FROM bid)"},
	{"q103", []string{"auction", "bid"}, "SELECT a.id AS auction_id, a.item_name AS auction_item_name FROM auction a " +
		"WHERE a.id IN (SELECT b.auction FROM bid b GROUP BY b.auction HAVING count(*) >= 20)"},
	{"q104", []string{"auction", "bid"}, "SELECT a.id AS auction_id, a.item_name AS auction_item_name FROM auction a " +
		"WHERE a.id NOT IN (SELECT b.auction FROM bid b GROUP BY b.auction HAVING count(*) < 20)"},
	{"q106", []string{"auction", "bid"}, "SELECT min(final) AS min_final FROM (SELECT auction.id, max(price) AS final " +
		"FROM auction, bid WHERE bid.auction = auction.id AND bid.date_time BETWEEN auction.date_time AND auction.expires " +
		"GROUP BY auction.id) f"},
}

// ceilingQuery reads the same sources as q and keeps nothing: the
// generator's throughput as a streaming job, the ceiling of any query
// over those sources.
func ceilingQuery(sources []string) nexmarkQuery {
	// Each predicate reads extra too, so that the generator makes every
	// field, as for a query reading them all (it skips extra when nothing
	// reads it).
	keep := map[string]string{"bid": "price < 0 AND extra = ''", "auction": "reserve < 0 AND extra = ''",
		"person": "id < 0 AND extra = ''"}
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
