package nexmark

import (
	"math"
)

// Config holds the generator's parameters, named after RisingWave's
// nexmark.* options (the Rust crate's NexmarkConfig); DefaultConfig has
// their defaults.
type Config struct {
	ActivePeople        int // people considered active for new auctions and bids
	InFlightAuctions    int // auctions open at any time
	OutOfOrderGroupSize int // 1: events in order
	AvgPersonByteSize   int
	AvgAuctionByteSize  int
	AvgBidByteSize      int
	HotSellerRatio      int // 1 in HotSellerRatio auctions is not by a hot seller
	HotAuctionRatio     int
	HotBidderRatio      int
	HotChannelRatio     int
	FirstEventID        int64
	FirstEventNumber    int64
	BaseTime            int64 // ms since the Unix epoch of event number 0
	NumCategories       int
	AuctionIDLead       int
	PersonIDLead        int
	PersonProportion    int
	AuctionProportion   int
	BidProportion       int
	FirstAuctionID      int64
	FirstPersonID       int64
	FirstCategoryID     int64
	NumEventGenerators  int
	// FirstRate and NextRate are events per second; when they differ the
	// rate follows RateShape over RatePeriod seconds.
	FirstRate, NextRate int
	RateShape           RateShape
	RatePeriod          int
	SineApproxSteps     int
}

// RateShape is how the rate moves between FirstRate and NextRate.
type RateShape int

const (
	RateSine RateShape = iota
	RateSquare
)

// hotRange is the size of the id blocks whose first id is hot (the
// reference's HOT_*_RATIO_2 of 100).
const hotRange = 100

// BaseTime2015 is RisingWave's base time when a table type is set:
// 2015-07-15 00:00:00 UTC.
const BaseTime2015 = 1436918400000

// DefaultConfig returns the defaults, with base time BaseTime2015.
func DefaultConfig() Config {
	return Config{
		ActivePeople: 1000, InFlightAuctions: 100, OutOfOrderGroupSize: 1,
		AvgPersonByteSize: 200, AvgAuctionByteSize: 500, AvgBidByteSize: 100,
		HotSellerRatio: 4, HotAuctionRatio: 2, HotBidderRatio: 4, HotChannelRatio: 2,
		BaseTime: BaseTime2015, NumCategories: 5, AuctionIDLead: 10, PersonIDLead: 10,
		PersonProportion: 1, AuctionProportion: 3, BidProportion: 46,
		FirstAuctionID: 1000, FirstPersonID: 1000, FirstCategoryID: 10,
		NumEventGenerators: 1, FirstRate: 10000, NextRate: 10000,
		RateShape: RateSine, RatePeriod: 600, SineApproxSteps: 10,
	}
}

// derived are the values the generator computes once from a Config, in
// float32 where the reference computes in f32, so timestamps match.
type derived struct {
	denominator    int
	stepLength     int
	eventsPerEpoch int
	epochPeriod    float32
	delays         []float32 // µs between events, per rate step
}

func derive(c Config) derived {
	d := derived{denominator: c.PersonProportion + c.AuctionProportion + c.BidProportion}
	gens := float32(c.NumEventGenerators)
	period := func(rate int) float32 { return float32(float32(1_000_000)/float32(rate)) * gens }
	switch {
	case c.FirstRate == c.NextRate:
		d.delays = []float32{period(c.FirstRate)}
	case c.RateShape == RateSquare:
		d.delays = []float32{period(c.FirstRate), period(c.NextRate)}
	default:
		mid := float64(c.FirstRate+c.NextRate) / 2
		amp := float64(c.FirstRate-c.NextRate) / 2
		for i := range c.SineApproxSteps {
			r := 2 * math.Pi * float64(i) / float64(c.SineApproxSteps)
			d.delays = append(d.delays, period(int(math.Round(mid+amp*math.Cos(r)))))
		}
	}
	n := c.SineApproxSteps
	if c.RateShape == RateSquare {
		n = 2
	}
	d.stepLength = (c.RatePeriod + n - 1) / n
	if len(d.delays) > 1 {
		for _, delay := range d.delays {
			events := float32(d.stepLength*1_000_000) / delay
			d.eventsPerEpoch += int(roundF32(events))
			d.epochPeriod += float32(events*delay) / 1000
		}
	}
	return d
}

// roundF32 rounds half away from zero, as Rust's f32::round.
func roundF32(x float32) float32 { return float32(math.Round(float64(x))) }

// timestamp is the time in ms of event number n.
func (g *Generator) timestamp(n int64) int64 {
	d := &g.d
	if len(d.delays) == 1 {
		// Each product is converted so no compiler fuses it with the division.
		return g.cfg.BaseTime + int64(roundF32(float32(float32(n)*d.delays[0])/1000))
	}
	epoch := n / int64(d.eventsPerEpoch)
	i := n % int64(d.eventsPerEpoch)
	var offset float32
	for _, delay := range d.delays {
		events := float32(d.stepLength*1_000_000) / delay
		if int64(g.cfg.OutOfOrderGroupSize) < int64(roundF32(events)) {
			inCycle := float32(float32(i) * delay)
			return g.cfg.BaseTime + int64(roundF32(float32(float32(epoch)*d.epochPeriod)+offset+inCycle/1000))
		}
		i -= int64(roundF32(events))
		offset += float32(events*delay) / 1000
	}
	return 0
}
