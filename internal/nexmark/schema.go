package nexmark

// CreateTable is the DDL of each kind's table, as RisingWave's Nexmark
// tests declare them: person and auction keyed by id, bid without a key.
// Both PostgreSQL and Sluice take it.
var CreateTable = [...]string{
	KindPerson: "CREATE TABLE person (id bigint PRIMARY KEY, name varchar, email_address varchar, credit_card varchar, " +
		"city varchar, state varchar, date_time timestamp, extra varchar)",
	KindAuction: "CREATE TABLE auction (id bigint PRIMARY KEY, item_name varchar, description varchar, initial_bid bigint, " +
		"reserve bigint, date_time timestamp, expires timestamp, seller bigint, category bigint, extra varchar)",
	KindBid: "CREATE TABLE bid (auction bigint, bidder bigint, price bigint, channel varchar, url varchar, " +
		"date_time timestamp, extra varchar)",
}

// Rows generates events [from, to) and returns each kind's rows in
// format f.
func (g *Generator) Rows(from, to int64, f Format) [3][]byte {
	var out [3][]byte
	for n := from; n < to; n++ {
		e := g.Event(n)
		out[e.Kind] = AppendRow(out[e.Kind], &e, f)
	}
	return out
}
