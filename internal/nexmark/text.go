package nexmark

import (
	"strconv"
	"time"
)

// The generator writes its events as rows of the three tables (the schema
// of RisingWave's create_tables, NEXMARK.md), so that PostgreSQL, Sluice
// or any other system can load the same events for a correctness check.

// Columns are each kind's table columns, in the order AppendRow writes.
var Columns = [...][]string{
	KindPerson:  {"id", "name", "email_address", "credit_card", "city", "state", "date_time", "extra"},
	KindAuction: {"id", "item_name", "description", "initial_bid", "reserve", "date_time", "expires", "seller", "category", "extra"},
	KindBid:     {"auction", "bidder", "price", "channel", "url", "date_time", "extra"},
}

// Tables are each kind's table name.
var Tables = [...]string{KindPerson: "person", KindAuction: "auction", KindBid: "bid"}

// Format is a row format.
type Format int

const (
	// COPY is PostgreSQL's COPY text format: tab-separated, backslash
	// escapes.
	COPY Format = iota
	// CSV is RFC 4180: comma-separated, fields quoted when they need it.
	CSV
)

// AppendRow appends e as one line of its kind's table in format f.
func AppendRow(dst []byte, e *Event, f Format) []byte {
	w := rowWriter{dst: dst, f: f}
	switch e.Kind {
	case KindPerson:
		p := &e.Person
		w.int(p.ID)
		w.str(p.Name)
		w.str(p.EmailAddress)
		w.str(p.CreditCard)
		w.str(p.City)
		w.str(p.State)
		w.time(p.DateTime)
		w.str(p.Extra)
	case KindAuction:
		a := &e.Auction
		w.int(a.ID)
		w.str(a.ItemName)
		w.str(a.Desc)
		w.int(a.InitialBid)
		w.int(a.Reserve)
		w.time(a.DateTime)
		w.time(a.Expires)
		w.int(a.Seller)
		w.int(a.Category)
		w.str(a.Extra)
	case KindBid:
		b := &e.Bid
		w.int(b.Auction)
		w.int(b.Bidder)
		w.int(b.Price)
		w.str(b.Channel)
		w.str(b.URL)
		w.time(b.DateTime)
		w.str(b.Extra)
	}
	return append(w.dst, '\n')
}

type rowWriter struct {
	dst    []byte
	f      Format
	fields int
}

func (w *rowWriter) sep() {
	if w.fields > 0 {
		if w.f == CSV {
			w.dst = append(w.dst, ',')
		} else {
			w.dst = append(w.dst, '\t')
		}
	}
	w.fields++
}

func (w *rowWriter) int(v int64) {
	w.sep()
	w.dst = strconv.AppendInt(w.dst, v, 10)
}

// time writes ms since the epoch as a timestamp without time zone, in UTC.
func (w *rowWriter) time(ms int64) {
	w.sep()
	w.dst = time.UnixMilli(ms).UTC().AppendFormat(w.dst, "2006-01-02 15:04:05.000")
}

func (w *rowWriter) str(s string) {
	w.sep()
	if w.f == CSV {
		w.csv(s)
		return
	}
	for i := range len(s) {
		switch c := s[i]; c {
		case '\\':
			w.dst = append(w.dst, `\\`...)
		case '\t':
			w.dst = append(w.dst, `\t`...)
		case '\n':
			w.dst = append(w.dst, `\n`...)
		case '\r':
			w.dst = append(w.dst, `\r`...)
		default:
			w.dst = append(w.dst, c)
		}
	}
}

func (w *rowWriter) csv(s string) {
	quote := s == ""
	for i := 0; i < len(s) && !quote; i++ {
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r'
	}
	if !quote {
		w.dst = append(w.dst, s...)
		return
	}
	w.dst = append(w.dst, '"')
	for i := range len(s) {
		if s[i] == '"' {
			w.dst = append(w.dst, '"')
		}
		w.dst = append(w.dst, s[i])
	}
	w.dst = append(w.dst, '"')
}
