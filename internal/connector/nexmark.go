package connector

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/nexmark"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// fieldClass is the Go shape of a Nexmark field.
type fieldClass uint8

const (
	fieldInt fieldClass = iota
	fieldStr
	fieldTime // ms since the Unix epoch
)

// nexmarkFields are each kind's fields, in the order RisingWave declares
// them.
var nexmarkFields = [3][]struct {
	name  string
	class fieldClass
}{
	nexmark.KindPerson: {{"id", fieldInt}, {"name", fieldStr}, {"email_address", fieldStr}, {"credit_card", fieldStr},
		{"city", fieldStr}, {"state", fieldStr}, {"date_time", fieldTime}, {"extra", fieldStr}},
	nexmark.KindAuction: {{"id", fieldInt}, {"item_name", fieldStr}, {"description", fieldStr}, {"initial_bid", fieldInt},
		{"reserve", fieldInt}, {"date_time", fieldTime}, {"expires", fieldTime}, {"seller", fieldInt},
		{"category", fieldInt}, {"extra", fieldStr}},
	nexmark.KindBid: {{"auction", fieldInt}, {"bidder", fieldInt}, {"price", fieldInt}, {"channel", fieldStr},
		{"url", fieldStr}, {"date_time", fieldTime}, {"extra", fieldStr}},
}

// nexmarkSource is the nexmark connector: the events of one table type,
// its positions (the combined stream's event indexes) dealt round-robin
// to the splits, as RisingWave's reader steps its generator.
type nexmarkSource struct {
	gen      *nexmark.Generator
	kind     nexmark.Kind
	fields   []int // declared column → field index
	tz       []bool
	rowID    bool
	schema   []types.Type
	splits   int64
	eventNum int64 // positions below this exist
	maxChunk int
	gapNanos int64
	omit     nexmark.Omit // the fields no read column holds (ReadOnly)
	read     []bool       // the columns read (ReadOnly; nil: all)
}

func openNexmark(o *options, cols []Column, rowID bool) (Source, error) {
	s := &nexmarkSource{rowID: rowID}
	if err := s.parseStream(o); err != nil {
		return nil, err
	}
	cfg, err := nexmarkConfig(o)
	if err != nil {
		return nil, err
	}
	if s.gen, err = nexmark.NewGenerator(cfg); err != nil {
		return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid nexmark options: %v", err)
	}
	if err := s.bindColumns(cols); err != nil {
		return nil, err
	}
	s.schema = Spec{Columns: cols, RowID: rowID}.Schema()
	return s, nil
}

// parseStream reads the options that shape the stream rather than the
// events.
func (s *nexmarkSource) parseStream(o *options) error {
	tt, ok := o.str("nexmark.table.type")
	switch strings.ToLower(strings.TrimSpace(tt)) {
	case "person":
		s.kind = nexmark.KindPerson
	case "auction":
		s.kind = nexmark.KindAuction
	case "bid":
		s.kind = nexmark.KindBid
	default:
		if !ok {
			return sqlerr.New(sqlerr.FeatureNotSupported, "the combined nexmark stream (no nexmark.table.type) needs struct "+
				"columns, which Sluice does not have yet; set nexmark.table.type to Bid, Auction or Person")
		}
		return o.invalid("nexmark.table.type", tt, "Bid, Auction or Person")
	}
	var err error
	ints := []struct {
		name        string
		dst         *int64
		def, lo, hi int64
	}{
		{name: "nexmark.split.num", dst: &s.splits, def: 1, lo: 1, hi: 1024},
		{name: "nexmark.event.num", dst: &s.eventNum, def: math.MaxInt64, lo: 0, hi: math.MaxInt64},
		{name: "nexmark.min.event.gap.in.ns", dst: &s.gapNanos, def: 100_000, lo: 0, hi: int64(time.Hour)},
	}
	for _, x := range ints {
		if *x.dst, err = o.int(x.name, x.def, x.lo, x.hi); err != nil {
			return err
		}
	}
	chunk, err := o.int("nexmark.max.chunk.size", 1024, 1, 1<<16)
	s.maxChunk = int(chunk)
	return err
}

// nexmarkConfig reads the options that shape the events.
func nexmarkConfig(o *options) (nexmark.Config, error) {
	cfg := nexmark.DefaultConfig()
	ints := []struct {
		name string
		dst  *int
	}{
		{"nexmark.active.people", &cfg.ActivePeople}, {"nexmark.in.flight.auctions", &cfg.InFlightAuctions},
		{"nexmark.out.of.order.group.size", &cfg.OutOfOrderGroupSize},
		{"nexmark.avg.person.byte.size", &cfg.AvgPersonByteSize}, {"nexmark.avg.auction.byte.size", &cfg.AvgAuctionByteSize},
		{"nexmark.avg.bid.byte.size", &cfg.AvgBidByteSize}, {"nexmark.hot.seller.ratio", &cfg.HotSellerRatio},
		{"nexmark.hot.auction.ratio", &cfg.HotAuctionRatio}, {"nexmark.hot.bidder.ratio", &cfg.HotBidderRatio},
		{"nexmark.hot.channel.ratio", &cfg.HotChannelRatio}, {"nexmark.num.categories", &cfg.NumCategories},
		{"nexmark.auction.id.lead", &cfg.AuctionIDLead}, {"nexmark.person.id.lead", &cfg.PersonIDLead},
		{"nexmark.person.proportion", &cfg.PersonProportion}, {"nexmark.auction.proportion", &cfg.AuctionProportion},
		{"nexmark.bid.proportion", &cfg.BidProportion},
	}
	for _, x := range ints {
		v, err := o.int(x.name, int64(*x.dst), 0, 1<<30)
		if err != nil {
			return cfg, err
		}
		*x.dst = int(v)
	}
	int64s := []struct {
		name string
		dst  *int64
	}{
		{"nexmark.first.event.id", &cfg.FirstEventID}, {"nexmark.first.event.number", &cfg.FirstEventNumber},
		{"nexmark.base.time", &cfg.BaseTime}, {"nexmark.first.auction.id", &cfg.FirstAuctionID},
		{"nexmark.first.person.id", &cfg.FirstPersonID}, {"nexmark.first.category.id", &cfg.FirstCategoryID},
	}
	for _, x := range int64s {
		v, err := o.int(x.name, *x.dst, 0, math.MaxInt64/4)
		if err != nil {
			return cfg, err
		}
		*x.dst = v
	}
	err := o.refuse(map[string]string{"nexmark.use.real.time": "false"}, "nexmark.use.real.time",
		"nexmark.us.states", "nexmark.us.cities", "nexmark.first.names", "nexmark.last.names", "nexmark.rate.shape",
		"nexmark.rate.period", "nexmark.first.event.rate", "nexmark.events.per.sec", "nexmark.next.event.rate",
		"nexmark.us.per.unit", "nexmark.threads", "nexmark.sine.approx.steps", "nexmark.hot.seller.ratio.2",
		"nexmark.hot.auction.ratio.2", "nexmark.hot.bidder.ratio.2")
	return cfg, err
}

// bindColumns maps each declared column to the field of the same name.
func (s *nexmarkSource) bindColumns(cols []Column) error {
	fields := nexmarkFields[s.kind]
	for _, c := range cols {
		f := -1
		for i, fd := range fields {
			if strings.EqualFold(fd.name, c.Name) {
				f = i
			}
		}
		if f < 0 {
			names := make([]string, len(fields))
			for i, fd := range fields {
				names[i] = fd.name
			}
			return sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q is not a field of nexmark %s events; the fields are %s",
				c.Name, s.kind, strings.Join(names, ", "))
		}
		want := map[fieldClass]string{fieldInt: "bigint", fieldStr: "varchar", fieldTime: "timestamp or timestamptz"}[fields[f].class]
		ok := false
		switch fields[f].class {
		case fieldInt:
			ok = c.Type.ID == types.Int64
		case fieldStr:
			ok = c.Type.ID == types.Varchar
		case fieldTime:
			ok = c.Type.ID == types.Timestamp || c.Type.ID == types.Timestamptz
		}
		if !ok {
			return sqlerr.Errorf(sqlerr.DatatypeMismatch, "column %q of a nexmark %s source is %s, not %s",
				c.Name, s.kind, want, c.Type)
		}
		s.fields = append(s.fields, f)
	}
	return nil
}

// ReadOnly implements Narrower: a reader fills no unread column, which
// holds NULLs from the reader's types.NullHeads (a header per chunk, not
// a vector nobody looks at: q5 reads two of a bid's seven columns, and
// the other five were a seventh of what it allocated), and the generator
// skips making the costly fields no read column holds (omitted).
func (s *nexmarkSource) ReadOnly(read []bool) {
	s.read = slices.Clone(read)
	needed := map[string]bool{}
	for i, f := range s.fields {
		if read == nil || i >= len(read) || read[i] {
			needed[nexmarkFields[s.kind][f].name] = true
		}
	}
	s.omit = omitted(needed)
}

// omitted is what the generator may leave out when only the needed
// fields are read.
func omitted(needed map[string]bool) nexmark.Omit {
	var o nexmark.Omit
	if !needed["extra"] {
		o |= nexmark.OmitExtra
	}
	if !needed["price"] && !needed["initial_bid"] && !needed["reserve"] {
		o |= nexmark.OmitPrice
	}
	if !needed["item_name"] && !needed["description"] {
		o |= nexmark.OmitItemText
	}
	return o
}

func (s *nexmarkSource) Splits() int { return int(s.splits) }

func (s *nexmarkSource) End(split int) (int64, bool) {
	if s.eventNum == math.MaxInt64 {
		return 0, false
	}
	return ceilDiv(s.eventNum-int64(split), s.splits), true
}

// ceilDiv is ⌈a/b⌉ for b > 0, and 0 for a ≤ 0.
func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

func (s *nexmarkSource) Open(split int, offset int64) (Reader, error) {
	if split < 0 || int64(split) >= s.splits || offset < 0 {
		return nil, fmt.Errorf("connector: nexmark has no split %d at offset %d (of %d splits)", split, offset, s.splits)
	}
	return &nexmarkReader{s: s, split: int64(split), pos: int64(split) + offset*s.splits,
		nulls: types.NewNullHeads(s.schema, s.maxChunk)}, nil
}

// nexmarkReader reads positions split, split+splits, … of the stream.
type nexmarkReader struct {
	s     *nexmarkSource
	split int64
	pos   int64 // the next position to look at
	// start and startPos pace the reader: position p is due at
	// start + (p-startPos) × gap.
	start    time.Time
	startPos int64
	nulls    *types.NullHeads // the unread columns' NULLs
}

// scanFactor bounds the positions one Read looks at per row it may
// return: a Person source returns one event in fifty.
const scanFactor = 64

func (r *nexmarkReader) Read(limit int) (*types.Chunk, int64, Ready, error) {
	s := r.s
	limit = min(limit, s.maxChunk)
	due := s.eventNum
	if s.gapNanos > 0 {
		now := time.Now()
		if r.start.IsZero() {
			r.start, r.startPos = now, r.pos
		}
		due = min(due, r.startPos+int64(now.Sub(r.start))/s.gapNanos+1)
	}
	if r.pos >= due {
		return nil, r.offset(), r.wait(), nil
	}
	cols, err := newColumns(s.schema, limit, s.read)
	if err != nil {
		return nil, 0, Ready{}, err
	}
	n, scan := 0, int64(limit)*scanFactor
	for ; n < limit && r.pos < due && scan > 0; r.pos, scan = r.pos+s.splits, scan-1 {
		num := s.gen.Number(r.pos)
		if s.gen.KindOf(num) != s.kind {
			continue
		}
		e := s.gen.EventOmitting(num, s.omit)
		s.appendEvent(cols, &e, r.pos)
		n++
	}
	if n == 0 {
		return nil, r.offset(), r.wait(), nil
	}
	for i, c := range cols {
		if c == nil { // not read
			cols[i] = r.nulls.Get(i, n)
		}
	}
	return insertChunk(cols, n), r.offset(), Ready{}, nil
}

// wait says when a reader that has nothing to return may have a row.
func (r *nexmarkReader) wait() Ready {
	switch {
	case r.pos >= r.s.eventNum:
		return Ready{Done: true}
	case r.s.gapNanos > 0:
		return Ready{At: r.start.Add(time.Duration((r.pos - r.startPos) * r.s.gapNanos))}
	}
	return Ready{} // scanned its limit of positions without a match
}

func (r *nexmarkReader) offset() int64 {
	// pos = split + offset×splits, rounded up past the stream's end.
	return (r.pos - r.split + r.s.splits - 1) / r.s.splits
}

func (s *nexmarkSource) appendEvent(cols []types.Column, e *nexmark.Event, pos int64) {
	for i, f := range s.fields {
		if cols[i] == nil {
			continue // not read
		}
		switch nexmarkFields[s.kind][f].class {
		case fieldInt:
			v := cols[i].(*types.Vec[int64])
			v.Vals = append(v.Vals, intField(e, f))
		case fieldStr:
			v := cols[i].(*types.Vec[string])
			v.Vals = append(v.Vals, strField(e, f))
		case fieldTime:
			us := (intField(e, f) - types.TimestampEpochSeconds*1000) * 1000
			if v, ok := cols[i].(*types.Vec[types.DTimestamp]); ok {
				v.Vals = append(v.Vals, types.DTimestamp(us))
			} else {
				v := cols[i].(*types.Vec[types.DTimestamptz])
				v.Vals = append(v.Vals, types.DTimestamptz(us))
			}
		}
	}
	if s.rowID && cols[len(cols)-1] != nil {
		v := cols[len(cols)-1].(*types.Vec[int64])
		v.Vals = append(v.Vals, pos)
	}
}

// intField is field f (an int or time field) of e's kind.
func intField(e *nexmark.Event, f int) int64 {
	switch e.Kind {
	case nexmark.KindPerson:
		if f == 0 {
			return e.Person.ID
		}
		return e.Person.DateTime
	case nexmark.KindAuction:
		a := &e.Auction
		return [...]int64{0: a.ID, 3: a.InitialBid, 4: a.Reserve, 5: a.DateTime, 6: a.Expires, 7: a.Seller, 8: a.Category}[f]
	}
	b := &e.Bid
	return [...]int64{0: b.Auction, 1: b.Bidder, 2: b.Price, 5: b.DateTime}[f]
}

// strField is field f (a string field) of e's kind.
func strField(e *nexmark.Event, f int) string {
	switch e.Kind {
	case nexmark.KindPerson:
		p := &e.Person
		return [...]string{1: p.Name, 2: p.EmailAddress, 3: p.CreditCard, 4: p.City, 5: p.State, 7: p.Extra}[f]
	case nexmark.KindAuction:
		a := &e.Auction
		return [...]string{1: a.ItemName, 2: a.Desc, 9: a.Extra}[f]
	}
	b := &e.Bid
	return [...]string{3: b.Channel, 4: b.URL, 6: b.Extra}[f]
}
