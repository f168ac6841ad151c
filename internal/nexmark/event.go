package nexmark

import (
	"fmt"
	"math/bits"
	"strconv"
	"sync"
)

// Kind is an event's type.
type Kind uint8

const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

func (k Kind) String() string { return [...]string{"Person", "Auction", "Bid"}[k] }

// Event is one generated event: exactly one of its parts is set, by Kind.
type Event struct {
	Kind    Kind
	Person  Person
	Auction Auction
	Bid     Bid
}

// Time is the event's time, ms since the Unix epoch.
func (e *Event) Time() int64 {
	switch e.Kind {
	case KindPerson:
		return e.Person.DateTime
	case KindAuction:
		return e.Auction.DateTime
	}
	return e.Bid.DateTime
}

type Person struct {
	ID                                          int64
	Name, EmailAddress, CreditCard, City, State string
	DateTime                                    int64
	Extra                                       string
}

type Auction struct {
	ID                  int64
	ItemName, Desc      string
	InitialBid, Reserve int64
	DateTime, Expires   int64
	Seller, Category    int64
	Extra               string
}

type Bid struct {
	Auction, Bidder, Price int64
	Channel, URL           string
	DateTime               int64
	Extra                  string
}

var (
	firstNames  = []string{"peter", "paul", "luke", "john", "saul", "vicky", "kate", "julie", "sarah", "deiter", "walter"}
	lastNames   = []string{"shultz", "abrams", "spencer", "white", "bartels", "walton", "smith", "jones", "noris"}
	usCities    = []string{"phoenix", "los angeles", "san francisco", "boise", "portland", "bend", "redmond", "seattle", "kent", "cheyenne"}
	usStates    = []string{"az", "ca", "id", "or", "wa", "wy"}
	hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// Generator makes the events of one Config. Event(n) depends on n alone,
// so splits can each generate their own numbers in any order.
type Generator struct {
	cfg Config
	d   derived
}

// NewGenerator checks c and returns its generator.
func NewGenerator(c Config) (*Generator, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &Generator{cfg: c, d: derive(c)}, nil
}

func (c Config) validate() error {
	for _, v := range []struct {
		name string
		v    int
	}{{"active people", c.ActivePeople}, {"in-flight auctions", c.InFlightAuctions}, {"out-of-order group size", c.OutOfOrderGroupSize},
		{"hot seller ratio", c.HotSellerRatio}, {"hot auction ratio", c.HotAuctionRatio}, {"hot bidder ratio", c.HotBidderRatio},
		{"hot channel ratio", c.HotChannelRatio}, {"categories", c.NumCategories}, {"person proportion", c.PersonProportion},
		{"auction proportion", c.AuctionProportion}, {"bid proportion", c.BidProportion}, {"event generators", c.NumEventGenerators},
		{"first rate", c.FirstRate}, {"next rate", c.NextRate}, {"rate period", c.RatePeriod}, {"sine steps", c.SineApproxSteps}} {
		if v.v < 1 {
			return fmt.Errorf("nexmark: %s must be at least 1, not %d", v.name, v.v)
		}
	}
	if c.FirstEventID < 0 || c.FirstEventNumber < 0 || c.AuctionIDLead < 0 || c.PersonIDLead < 0 {
		return fmt.Errorf("nexmark: first event id and number and the id leads must not be negative")
	}
	return nil
}

// Config returns the generator's configuration.
func (g *Generator) Config() Config { return g.cfg }

// KindOf is the kind of event number n.
func (g *Generator) KindOf(n int64) Kind {
	switch rem := int(n % int64(g.d.denominator)); {
	case rem < g.cfg.PersonProportion:
		return KindPerson
	case rem < g.cfg.PersonProportion+g.cfg.AuctionProportion:
		return KindAuction
	}
	return KindBid
}

// Number is the event number of the k-th event a generator emits (from
// 0), after the out-of-order shuffle within groups.
func (g *Generator) Number(k int64) int64 {
	n := int64(g.cfg.OutOfOrderGroupSize)
	e := g.cfg.FirstEventNumber + k
	return e/n*n + e*953%n
}

// Event returns event number n.
func (g *Generator) Event(n int64) Event { return g.event(n, 0) }

// Omit names fields a reader does not read, which EventOmitting leaves
// empty (zero).
type Omit uint8

const (
	// OmitExtra: every kind's extra. Making its random letters was a
	// tenth of the CPU of a query over bids' other fields.
	OmitExtra Omit = 1 << iota
	// OmitPrice: a bid's price, and an auction's initial bid and
	// reserve. Its power of ten was a twentieth of Nexmark q5's CPU.
	OmitPrice
	// OmitItemText: an auction's item name and description, 120 random
	// letters of every auction.
	OmitItemText
)

// EventOmitting is Event with the fields omit names left empty, for a
// reader that does not read them. Every other field is what Event gives:
// an omitted field still takes its draws from the event's generator.
func (g *Generator) EventOmitting(n int64, omit Omit) Event { return g.event(n, omit) }

func (g *Generator) event(n int64, omit Omit) Event {
	id := g.cfg.FirstEventID + n
	ts := g.timestamp(n)
	switch g.KindOf(n) {
	case KindPerson:
		return Event{Kind: KindPerson, Person: g.person(id, ts, omit&OmitExtra == 0)}
	case KindAuction:
		return Event{Kind: KindAuction, Auction: g.auction(n, id, ts, omit)}
	}
	return Event{Kind: KindBid, Bid: g.bid(id, ts, omit)}
}

func (g *Generator) person(id, ts int64, extra bool) Person {
	r := newRNG(uint64(id))
	p := Person{ID: g.lastPerson(id) + g.cfg.FirstPersonID, DateTime: ts}
	p.Name = choose(r, firstNames) + " " + choose(r, lastNames)
	p.EmailAddress = string(r.appendLetters(nil, 7)) + "@" + string(r.appendLetters(nil, 5)) + ".com"
	cc := make([]byte, 0, 19)
	for i := range 4 {
		if i > 0 {
			cc = append(cc, ' ')
		}
		cc = appendPadded(cc, int64(r.below32(10000)), 4)
	}
	p.CreditCard = string(cc)
	p.City, p.State = choose(r, usCities), choose(r, usStates)
	if extra {
		size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State)
		p.Extra = r.extra(size, g.cfg.AvgPersonByteSize)
	}
	return p
}

func (g *Generator) auction(n, id, ts int64, omit Omit) Auction {
	r := newRNG(uint64(id))
	a := Auction{ID: g.lastAuction(id) + g.cfg.FirstAuctionID, DateTime: ts}
	const nameLen, descLen = 20, 100
	if omit&OmitItemText == 0 {
		a.ItemName = r.letters(nameLen)
		a.Desc = r.letters(descLen)
	} else {
		r.skipLetters(nameLen + descLen)
	}
	if omit&OmitPrice == 0 {
		a.InitialBid = r.price()
		a.Reserve = a.InitialBid + r.price()
	} else {
		r.skipPrice()
		r.skipPrice()
	}
	a.Expires = ts + g.auctionLength(n, r, ts)
	if r.below64(uint64(g.cfg.HotSellerRatio)) > 0 {
		a.Seller = g.lastPerson(id) / hotRange * hotRange
	} else {
		a.Seller = g.nextPerson(id, r)
	}
	a.Seller += g.cfg.FirstPersonID
	a.Category = g.cfg.FirstCategoryID + int64(r.below64(uint64(g.cfg.NumCategories)))
	if omit&OmitExtra == 0 {
		a.Extra = r.extra(8+nameLen+descLen+8*5, g.cfg.AvgAuctionByteSize)
	}
	return a
}

func (g *Generator) bid(id, ts int64, omit Omit) Bid {
	r := newRNG(uint64(id))
	b := Bid{DateTime: ts}
	if r.below64(uint64(g.cfg.HotAuctionRatio)) > 0 {
		b.Auction = g.lastAuction(id) / hotRange * hotRange
	} else {
		b.Auction = g.nextAuction(id, r)
	}
	if r.below64(uint64(g.cfg.HotBidderRatio)) > 0 {
		b.Bidder = g.lastPerson(id)/hotRange*hotRange + 1
	} else {
		b.Bidder = g.nextPerson(id, r)
	}
	b.Auction += g.cfg.FirstAuctionID
	b.Bidder += g.cfg.FirstPersonID
	if omit&OmitPrice == 0 {
		b.Price = r.price()
	} else {
		r.skipPrice()
	}
	if r.below64(uint64(g.cfg.HotChannelRatio)) > 0 {
		i := r.below64(uint64(len(hotChannels)))
		b.Channel, b.URL = hotChannels[i], hotURLs()[i]
	} else {
		c := choose(r, channelURLs())
		b.Channel, b.URL = c[0], c[1]
	}
	if omit&OmitExtra == 0 {
		b.Extra = r.extra(32, g.cfg.AvgBidByteSize)
	}
	return b
}

// lastPerson is the 0-based id of the newest person at event id.
func (g *Generator) lastPerson(id int64) int64 {
	den := int64(g.d.denominator)
	return id/den*int64(g.cfg.PersonProportion) + min(id%den, int64(g.cfg.PersonProportion-1))
}

// nextPerson draws an active person, possibly one a little ahead of the
// newest.
func (g *Generator) nextPerson(id int64, r *rng) int64 {
	people := g.lastPerson(id) + 1
	active := min(people, int64(g.cfg.ActivePeople))
	return people - active + int64(r.below64(uint64(active+int64(g.cfg.PersonIDLead))))
}

// lastAuction is the 0-based id of the newest auction at event id.
func (g *Generator) lastAuction(id int64) int64 {
	den, pp, ap := int64(g.d.denominator), int64(g.cfg.PersonProportion), int64(g.cfg.AuctionProportion)
	epoch, off := id/den, id%den
	switch {
	case off < pp:
		epoch--
		off = ap - 1
	case pp+ap <= off:
		off = ap - 1
	default:
		off -= pp
	}
	return epoch*ap + off
}

// nextAuction draws one of the auctions in flight, possibly one a little
// ahead of the newest.
func (g *Generator) nextAuction(id int64, r *rng) int64 {
	last := g.lastAuction(id)
	lo := max(last-int64(g.cfg.InFlightAuctions), 0)
	return lo + int64(r.below64(uint64(last-lo+1+int64(g.cfg.AuctionIDLead))))
}

// auctionLength is how long an auction opened at event n lasts: up to
// twice the time it takes to open InFlightAuctions more.
func (g *Generator) auctionLength(n int64, r *rng, ts int64) int64 {
	ahead := int64(g.cfg.InFlightAuctions*g.d.denominator) / int64(g.cfg.AuctionProportion)
	horizon := g.timestamp(n+ahead) - ts
	return 1 + int64(r.below64(uint64(max(horizon*2, 1))))
}

func appendPadded(dst []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for range width - len(s) {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// baseURL is the random URL of seed: three path parts of 3-4 characters,
// each a letter or, 1 time in 13, '_'.
func baseURL(seed uint64) string {
	r := newRNG(seed)
	u := []byte("https://www.nexmark.com/")
	for i := range 3 {
		if i > 0 {
			u = append(u, '/')
		}
		n := 3 + r.below64(5-3)
		for range n {
			if r.below32(13) == 0 {
				u = append(u, '_')
			} else {
				u = append(u, r.letter())
			}
		}
	}
	return string(append(u, "/item.htm?query=1"...))
}

// channelCount is the number of ordinary channels, channel-0 … 9999.
const channelCount = 10_000

var (
	hotURLs = sync.OnceValue(func() []string {
		urls := make([]string, len(hotChannels))
		for i := range urls {
			urls[i] = baseURL(uint64(i))
		}
		return urls
	})
	// channelURLs are the ordinary channels and their URLs, 9 in 10 of
	// which name the channel's id (its bits reversed).
	channelURLs = sync.OnceValue(func() [][2]string {
		out := make([][2]string, channelCount)
		for i := range out {
			u := baseURL(uint64(i))
			if newRNG(uint64(i)).below32(10) > 0 {
				rev := int64(int32(bits.Reverse32(uint32(i))))
				u += "&channel_id=" + strconv.FormatInt(max(rev, -rev), 10)
			}
			out[i] = [2]string{"channel-" + strconv.Itoa(i), u}
		}
		return out
	})
)
