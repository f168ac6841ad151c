package nexmark

import (
	"strings"
	"testing"
)

func newGen(t *testing.T, c Config) *Generator {
	t.Helper()
	g, err := NewGenerator(c)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestFirstPersonMatchesReference: event 0 is the person the Rust crate
// RisingWave uses generates in its own test, character for character,
// which checks the seeding, the draws and their order.
func TestFirstPersonMatchesReference(t *testing.T) {
	g := newGen(t, DefaultConfig())
	e := g.Event(0)
	want := Person{ID: 1000, Name: "vicky noris", EmailAddress: "yplkvgz@qbxfg.com", CreditCard: "7878 5821 1864 2539",
		City: "cheyenne", State: "az", DateTime: BaseTime2015,
		Extra: "lwaiyhjhrkaruidlsjilvqccyedttedeynpqmackqbwvklwuyypztnkengzgtwtjivjgrxurskpcldfohdzuwnefqymyncrksxyfaecwsbswjumzxudgoznyhakxrudomnxtmqtgshecfjgspxzpludz"}
	if e.Kind != KindPerson || e.Person != want {
		t.Fatalf("event 0 = %+v\nwant %+v", e, want)
	}
}

// TestEventsAreDeterministic: an event is the same whatever was generated
// before it, by whichever generator.
func TestEventsAreDeterministic(t *testing.T) {
	a, b := newGen(t, DefaultConfig()), newGen(t, DefaultConfig())
	const n = 3000
	forward := make([]Event, n)
	for i := range int64(n) {
		forward[i] = a.Event(i)
	}
	for i := int64(n - 1); i >= 0; i-- {
		if e := b.Event(i); e != forward[i] {
			t.Fatalf("event %d generated last differs from event %d generated in order:\n%+v\n%+v", i, i, e, forward[i])
		}
	}
	if forward[1] == forward[2] || forward[60] == forward[61] {
		t.Fatal("neighbouring events are equal")
	}
}

// TestProportionsAndIDs checks the 1:3:46 mix and the id rules over
// 50 000 events: person and auction ids count up from 1000 without gaps,
// a bid names an auction at most 10 ahead of the newest and not more than
// 100 behind it, and times rise 100 µs an event.
func TestProportionsAndIDs(t *testing.T) {
	g := newGen(t, DefaultConfig())
	var people, auctions, bids int64
	hotAuction, hotBidder := 0, 0
	for n := range int64(50_000) {
		e := g.Event(n)
		if got, want := e.Time(), BaseTime2015+(n+5)/10; got != want && got != want-1 {
			t.Fatalf("event %d at %d, want about %d", n, got, want)
		}
		switch e.Kind {
		case KindPerson:
			if e.Person.ID != 1000+people {
				t.Fatalf("event %d: person %d, want %d", n, e.Person.ID, 1000+people)
			}
			people++
		case KindAuction:
			a := e.Auction
			if a.ID != 1000+auctions {
				t.Fatalf("event %d: auction %d, want %d", n, a.ID, 1000+auctions)
			}
			auctions++
			if a.Expires <= a.DateTime || a.Reserve < a.InitialBid || a.Category < 10 || a.Category >= 15 || a.Seller < 1000 || a.Seller > 1000+people+10 {
				t.Fatalf("event %d: bad auction %+v", n, a)
			}
		case KindBid:
			bids++
			b := e.Bid
			newest := 1000 + auctions - 1
			if b.Auction > newest+10 || b.Auction < newest-100-1 && b.Auction != newest/100*100 {
				t.Fatalf("event %d: bid for auction %d, newest %d", n, b.Auction, newest)
			}
			if b.Auction == (newest-1000)/100*100+1000 {
				hotAuction++
			}
			if b.Bidder == (people-1)/100*100+1+1000 {
				hotBidder++
			}
			if b.Price < 100 || b.Price > 100_000_000 {
				t.Fatalf("event %d: price %d", n, b.Price)
			}
			if !strings.HasPrefix(b.URL, "https://www.nexmark.com/") || b.Channel == "" {
				t.Fatalf("event %d: channel %q, url %q", n, b.Channel, b.URL)
			}
		}
	}
	if people != 1000 || auctions != 3000 || bids != 46000 {
		t.Fatalf("%d people, %d auctions, %d bids; want 1000, 3000, 46000", people, auctions, bids)
	}
	// Half the bids go to the hot auction, three in four to the hot bidder
	// (plus the few others drawn at random that happen to hit them).
	if f := float64(hotAuction) / float64(bids); f < 0.48 || f > 0.55 {
		t.Errorf("hot auction in %.3f of bids, want about 0.5", f)
	}
	if f := float64(hotBidder) / float64(bids); f < 0.73 || f > 0.78 {
		t.Errorf("hot bidder in %.3f of bids, want about 0.75", f)
	}
}

// TestExtraSizes: extras pad events to their average sizes, ±20 %.
func TestExtraSizes(t *testing.T) {
	g := newGen(t, DefaultConfig())
	var sum [3]int
	var cnt [3]int
	for n := range int64(20_000) {
		e := g.Event(n)
		switch e.Kind {
		case KindPerson:
			p := e.Person
			sum[0] += 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State) + len(p.Extra)
		case KindAuction:
			sum[1] += 8 + 20 + 100 + 40 + len(e.Auction.Extra)
		case KindBid:
			sum[2] += 32 + len(e.Bid.Extra)
		}
		cnt[e.Kind]++
	}
	for k, avg := range []int{200, 500, 100} {
		if got := sum[k] / cnt[k]; got < avg-3 || got > avg+3 {
			t.Errorf("%v: average size %d, want about %d", Kind(k), got, avg)
		}
	}
}

func TestConfigRejectsZeros(t *testing.T) {
	c := DefaultConfig()
	c.BidProportion = 0
	if _, err := NewGenerator(c); err == nil || !strings.Contains(err.Error(), "bid proportion") {
		t.Fatalf("zero bid proportion: %v", err)
	}
}

func TestOutOfOrderNumbers(t *testing.T) {
	c := DefaultConfig()
	c.OutOfOrderGroupSize = 10
	g := newGen(t, c)
	seen := map[int64]bool{}
	for k := range int64(100) {
		n := g.Number(k)
		if n/10 != k/10 || seen[n] {
			t.Fatalf("emission %d is event %d", k, n)
		}
		seen[n] = true
	}
}

func TestAppendRow(t *testing.T) {
	g := newGen(t, DefaultConfig())
	e := g.Event(0)
	got := string(AppendRow(nil, &e, COPY))
	want := "1000\tvicky noris\typlkvgz@qbxfg.com\t7878 5821 1864 2539\tcheyenne\taz\t2015-07-15 00:00:00.000\t" + e.Person.Extra + "\n"
	if got != want {
		t.Fatalf("COPY row %q, want %q", got, want)
	}
	b := Event{Kind: KindBid, Bid: Bid{Auction: 1, Bidder: 2, Price: 3, Channel: `a,"b"`, URL: "x\ty", DateTime: 1500, Extra: ""}}
	if got, want := string(AppendRow(nil, &b, CSV)), "1,2,3,\"a,\"\"b\"\"\",x\ty,1970-01-01 00:00:01.500,\"\"\n"; got != want {
		t.Fatalf("CSV row %q, want %q", got, want)
	}
	if got, want := string(AppendRow(nil, &b, COPY)), "1\t2\t3\ta,\"b\"\tx\\ty\t1970-01-01 00:00:01.500\t\n"; got != want {
		t.Fatalf("COPY row %q, want %q", got, want)
	}
	for k, cols := range Columns {
		e := g.Event([]int64{0, 1, 4}[k])
		row := string(AppendRow(nil, &e, COPY))
		if n := strings.Count(row, "\t") + 1; n != len(cols) {
			t.Errorf("%s row has %d fields, want %d", Tables[k], n, len(cols))
		}
	}
}

// TestOmittedFieldsLeaveTheOthers: an event made omitting fields equals
// the whole event with those fields zeroed, for every combination: an
// omitted field still takes its draws, so the fields after it are the
// same.
func TestOmittedFieldsLeaveTheOthers(t *testing.T) {
	g := newGen(t, DefaultConfig())
	for omit := range OmitExtra | OmitPrice | OmitItemText + 1 {
		for n := range int64(2000) {
			want := g.Event(n)
			blank(&want, omit)
			if got := g.EventOmitting(n, omit); got != want {
				t.Fatalf("omit %b, event %d:\n got %+v\nwant %+v", omit, n, got, want)
			}
		}
	}
}

// blank zeroes the fields omit names.
func blank(e *Event, omit Omit) {
	if omit&OmitExtra != 0 {
		e.Person.Extra, e.Auction.Extra, e.Bid.Extra = "", "", ""
	}
	if omit&OmitPrice != 0 {
		e.Bid.Price, e.Auction.InitialBid, e.Auction.Reserve = 0, 0, 0
	}
	if omit&OmitItemText != 0 {
		e.Auction.ItemName, e.Auction.Desc = "", ""
	}
}
