package main

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// ingestData is every row the benchmark writes with COPY, generated
// before any measurement so the client does no work while a server is
// measured beyond sending bytes.
type ingestData struct {
	rows     int
	bids     []byte // COPY text of the Nexmark-style bid table, 7 columns
	auctions int    // distinct auction ids in bids (the group-by's groups)
	// auctionLo..auctionLo+auctionSpan-1 is the auction id range.
	auctionLo, auctionSpan int64
	auctionInfo            []byte // COPY text of auction_info: every id of the range
	keyed                  []byte // COPY text of (id, auction, price), id 0..rows-1
}

func (d *ingestData) size() int { return len(d.bids) + len(d.auctionInfo) + len(d.keyed) }

var (
	bidChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
	bidEpoch    = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
)

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// generateIngestData builds the rows deterministically from seed: auction
// ids in a range of about rows/100 values, bidders in rows/10, prices up
// to 10⁷, a Nexmark-like URL and a short random extra.
func generateIngestData(rows int, seed uint64) *ingestData {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	d := &ingestData{rows: rows, auctionLo: 1000, auctionSpan: int64(max(rows/100, 1))}
	bidders := max(rows/10, 1)
	seen := make([]bool, d.auctionSpan)
	buf := make([]byte, 0, rows*112)
	for i := range rows {
		a := rng.Int64N(d.auctionSpan)
		if !seen[a] {
			seen[a] = true
			d.auctions++
		}
		buf = strconv.AppendInt(buf, d.auctionLo+a, 10)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, int64(1000+rng.IntN(bidders)), 10)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, int64(100+rng.IntN(10_000_000)), 10)
		buf = append(buf, '\t')
		buf = append(buf, bidChannels[rng.IntN(len(bidChannels))]...)
		buf = append(buf, "\thttps://www.nexmark.com/"...)
		buf = appendRandom(buf, rng, 5)
		buf = append(buf, '/')
		buf = appendRandom(buf, rng, 5)
		buf = append(buf, "/item.htm?query=1&channel_id="...)
		buf = strconv.AppendInt(buf, int64(rng.IntN(1<<20)), 10)
		buf = append(buf, '\t')
		buf = bidEpoch.Add(time.Duration(i)*time.Millisecond).AppendFormat(buf, "2006-01-02 15:04:05.000")
		buf = append(buf, '\t')
		buf = appendRandom(buf, rng, 8+rng.IntN(9))
		buf = append(buf, '\n')
	}
	d.bids = buf

	info := make([]byte, 0, d.auctionSpan*12)
	for a := range d.auctionSpan {
		info = strconv.AppendInt(info, d.auctionLo+a, 10)
		info = append(info, '\t')
		info = strconv.AppendInt(info, a%10, 10)
		info = append(info, '\n')
	}
	d.auctionInfo = info

	keyed := make([]byte, 0, rows*24)
	for i := range rows {
		keyed = strconv.AppendInt(keyed, int64(i), 10)
		keyed = append(keyed, '\t')
		keyed = strconv.AppendInt(keyed, d.auctionLo+rng.Int64N(d.auctionSpan), 10)
		keyed = append(keyed, '\t')
		keyed = strconv.AppendInt(keyed, int64(100+rng.IntN(10_000_000)), 10)
		keyed = append(keyed, '\n')
	}
	d.keyed = keyed
	return d
}

func appendRandom(buf []byte, rng *rand.Rand, n int) []byte {
	for range n {
		buf = append(buf, letters[rng.IntN(len(letters))])
	}
	return buf
}
