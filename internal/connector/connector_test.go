package connector

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/nexmark"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

var bidColumns = []Column{{"auction", types.TInt64}, {"bidder", types.TInt64}, {"price", types.TInt64},
	{"channel", types.TVarchar}, {"url", types.TVarchar}, {"date_time", types.TTimestamp}, {"extra", types.TVarchar}}

func TestOpenErrorsNameTheProblem(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		code sqlerr.Code
		want string
	}{
		{Spec{Connector: "nope", Columns: bidColumns}, sqlerr.InvalidParameterValue, `unknown connector "nope"`},
		{Spec{Connector: "kafka", Columns: bidColumns}, sqlerr.FeatureNotSupported, `"kafka" is not supported yet`},
		{Spec{Connector: "nexmark", Options: map[string]string{"nexmark.tabel.type": "Bid"}, Columns: bidColumns},
			sqlerr.FeatureNotSupported, "combined nexmark stream"},
		{Spec{Connector: "nexmark", Options: map[string]string{"nexmark.table.type": "Bid", "nexmark.evnt.num": "5"}, Columns: bidColumns},
			sqlerr.InvalidParameterValue, `unrecognized option "nexmark.evnt.num" for connector nexmark; did you mean "nexmark.event.num"?`},
		{Spec{Connector: "nexmark", Options: map[string]string{"nexmark.table.type": "Bid", "foo": "bar"}, Columns: bidColumns},
			sqlerr.InvalidParameterValue, `unrecognized option "foo"`},
		{Spec{Connector: "nexmark", Options: map[string]string{"nexmark.table.type": "Bids"}, Columns: bidColumns},
			sqlerr.InvalidParameterValue, `invalid value "Bids" for option "nexmark.table.type"`},
		{Spec{Connector: "nexmark", Options: map[string]string{"nexmark.table.type": "Bid", "nexmark.split.num": "0"}, Columns: bidColumns},
			sqlerr.InvalidParameterValue, `"nexmark.split.num"`},
		{Spec{Connector: "nexmark", Options: map[string]string{"nexmark.table.type": "Bid", "nexmark.rate.shape": "sine"}, Columns: bidColumns},
			sqlerr.FeatureNotSupported, `"nexmark.rate.shape"`},
		{Spec{Connector: "nexmark", Options: map[string]string{"nexmark.table.type": "Bid"}, Columns: []Column{{"bidderx", types.TInt64}}},
			sqlerr.UndefinedColumn, `"bidderx" is not a field of nexmark Bid events`},
		{Spec{Connector: "nexmark", Options: map[string]string{"nexmark.table.type": "Bid"}, Columns: []Column{{"price", types.TInt32}}},
			sqlerr.DatatypeMismatch, `"price" of a nexmark Bid source is bigint`},
		{Spec{Connector: "datagen", Options: map[string]string{"fields.w.kind": "sequence"}, Columns: []Column{{"v", types.TInt64}}},
			sqlerr.InvalidParameterValue, `names column "w"`},
		{Spec{Connector: "datagen", Options: map[string]string{"fields.v.kind": "sequence"}, Columns: []Column{{"v", types.TVarchar}}},
			sqlerr.FeatureNotSupported, `sequence values of type`},
		{Spec{Connector: "datagen", Options: map[string]string{"fields.v.kind": "seq"}, Columns: []Column{{"v", types.TInt64}}},
			sqlerr.InvalidParameterValue, `"fields.v.kind"`},
		{Spec{Connector: "datagen", Options: map[string]string{"fields.v.max": "70000"}, Columns: []Column{{"v", types.TInt16}}},
			sqlerr.InvalidParameterValue, `"fields.v.max" of connector datagen: want an integer from 0 to 32767`},
		{Spec{Connector: "datagen", Options: map[string]string{"fields.v.length": "3"}, Columns: []Column{{"v", types.TInt32}}},
			sqlerr.InvalidParameterValue, `unrecognized option "fields.v.length"`},
		{Spec{Connector: "datagen", Options: map[string]string{"fields.v.min": "1"}, Columns: []Column{{"v", types.TTimestamp}}},
			sqlerr.InvalidParameterValue, `unrecognized option "fields.v.min"`},
		{Spec{Connector: "datagen", Options: map[string]string{"fields.v.max_past": "1000000 days"}, Columns: []Column{{"v", types.TTimestamptz}}},
			sqlerr.InvalidParameterValue, `"fields.v.max_past"`},
		{Spec{Connector: "datagen", Options: map[string]string{"fields.v.min": "0.5"}, Columns: []Column{{"v", types.TInt64}}},
			sqlerr.InvalidParameterValue, `"fields.v.min"`},
		{Spec{Connector: "datagen", Columns: []Column{{"_row_id", types.TInt64}}}, sqlerr.Code("42701"), "reserved"},
	} {
		_, err := Open(tc.spec)
		if err == nil || sqlerr.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v (%s), want %s containing %q", tc.spec.Options, err, sqlerr.CodeOf(err), tc.code, tc.want)
		}
	}
}

// readAll reads split to its end, from offset, at most max rows per read.
func readAll(t *testing.T, src Source, split int, offset int64, max int) []types.Row {
	t.Helper()
	r, err := src.Open(split, offset)
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	for {
		c, _, ready, err := r.Read(max)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			if ready.Done {
				return rows
			}
			if !ready.At.IsZero() {
				t.Fatalf("an unpaced reader asked to wait until %v", ready.At)
			}
			continue
		}
		for i := range c.Cardinality() {
			rows = append(rows, c.Row(i))
		}
	}
}

func TestNexmarkSplitsCoverTheGenerator(t *testing.T) {
	spec := Spec{Connector: "nexmark", RowID: true, Columns: bidColumns, Options: map[string]string{
		"nexmark.table.type": "Bid", "nexmark.split.num": "3", "nexmark.event.num": "2000", "nexmark.min.event.gap.in.ns": "0"}}
	src, err := Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]types.Row{}
	for s := range 3 {
		for _, row := range readAll(t, src, s, 0, 100) {
			id := row[len(row)-1].(int64)
			if _, dup := got[id]; dup || id%3 != int64(s) {
				t.Fatalf("split %d returned row id %d (duplicate: %v)", s, id, dup)
			}
			got[id] = row
		}
	}
	g, _ := nexmark.NewGenerator(nexmark.DefaultConfig())
	bids := 0
	for n := range int64(2000) {
		e := g.Event(n)
		if e.Kind != nexmark.KindBid {
			continue
		}
		bids++
		row, ok := got[n]
		ts := types.DTimestamp((e.Bid.DateTime - types.TimestampEpochSeconds*1000) * 1000)
		if !ok || row[0] != e.Bid.Auction || row[2] != e.Bid.Price || row[3] != e.Bid.Channel || row[5] != ts {
			t.Fatalf("event %d: got %v, want %+v", n, row, e.Bid)
		}
	}
	if bids != len(got) {
		t.Fatalf("%d rows for %d bids", len(got), bids)
	}
}

func TestReadersResumeFromAnOffset(t *testing.T) {
	for _, spec := range []Spec{
		{Connector: "nexmark", RowID: true, Columns: bidColumns[:3], Options: map[string]string{"nexmark.table.type": "Bid",
			"nexmark.split.num": "2", "nexmark.event.num": "3000", "nexmark.min.event.gap.in.ns": "0"}},
		{Connector: "datagen", RowID: true, Columns: []Column{{"id", types.TInt32}, {"v", types.TFloat64}, {"s", types.TVarchar}},
			Options: map[string]string{"datagen.split.num": "2", "datagen.rows.per.second": "1000000000",
				"fields.id.kind": "sequence", "fields.id.start": "5", "fields.id.end": "1004", "fields.s.length": "4"}},
	} {
		src, err := Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		all := readAll(t, src, 1, 0, 64)
		r, _ := src.Open(1, 0)
		c, off, _, err := r.Read(10)
		if err != nil || c == nil {
			t.Fatalf("%s: first read: %v %v", spec.Connector, c, err)
		}
		rest := readAll(t, src, 1, off, 64)
		if got := c.Cardinality() + len(rest); got != len(all) || !slices.EqualFunc(rest, all[c.Cardinality():], rowsEqual) {
			t.Fatalf("%s: resuming at offset %d gave %d rows, want %d the same", spec.Connector, off, got, len(all))
		}
	}
}

func rowsEqual(a, b types.Row) bool {
	return slices.EqualFunc(a, b, func(x, y types.Datum) bool { return x == y })
}

func TestDatagenSequenceIsDealtToSplits(t *testing.T) {
	src, err := Open(Spec{Connector: "datagen", Columns: []Column{{"id", types.TInt64}, {"b", types.TBool}},
		Options: map[string]string{"datagen.split.num": "3", "datagen.rows.per.second": "1000000000",
			"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for s := range 3 {
		for _, row := range readAll(t, src, s, 0, 7) {
			ids = append(ids, row[0].(int64))
		}
	}
	slices.Sort(ids)
	if len(ids) != 100 || ids[0] != 1 || ids[99] != 100 || slices.Compact(ids) == nil || len(slices.Compact(ids)) != 100 {
		t.Fatalf("ids %v", ids)
	}
}

func TestReadersArePaced(t *testing.T) {
	for _, spec := range []Spec{
		{Connector: "nexmark", Columns: bidColumns[:1], Options: map[string]string{"nexmark.table.type": "Bid",
			"nexmark.min.event.gap.in.ns": "10000000"}}, // 100 events/s
		{Connector: "datagen", Columns: []Column{{"v", types.TInt64}}, Options: map[string]string{"datagen.rows.per.second": "100"}},
	} {
		src, err := Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := src.Open(0, 0)
		start := time.Now()
		rows := 0
		for time.Since(start) < 200*time.Millisecond {
			c, _, ready, err := r.Read(1024)
			if err != nil {
				t.Fatal(err)
			}
			if c != nil {
				rows += c.Cardinality()
				continue
			}
			if ready.At.IsZero() || ready.Done {
				t.Fatalf("%s: no rows, and no time to come back: %+v", spec.Connector, ready)
			}
			time.Sleep(time.Until(ready.At))
		}
		// 100 rows/s for 0.2 s; generous bounds for a loaded machine.
		if rows < 5 || rows > 40 {
			t.Errorf("%s: %d rows in 200 ms at 100 rows/s", spec.Connector, rows)
		}
	}
}

func TestBoundedSplitsEndWhereTheReaderStops(t *testing.T) {
	for _, spec := range []Spec{
		{Connector: "nexmark", Columns: bidColumns[:1], Options: map[string]string{"nexmark.table.type": "Person",
			"nexmark.split.num": "3", "nexmark.event.num": "1001", "nexmark.min.event.gap.in.ns": "0"}},
		{Connector: "datagen", Columns: []Column{{"id", types.TInt64}}, Options: map[string]string{"datagen.split.num": "4",
			"datagen.rows.per.second": "1000000000", "fields.id.kind": "sequence", "fields.id.end": "9"}},
	} {
		if spec.Connector == "nexmark" {
			spec.Columns = []Column{{"id", types.TInt64}}
		}
		src, err := Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		for s := range src.Splits() {
			r, _ := src.Open(s, 0)
			var off int64
			for {
				_, o, ready, err := r.Read(7)
				if err != nil {
					t.Fatal(err)
				}
				off = o
				if ready.Done {
					break
				}
			}
			if end, ok := src.End(s); !ok || end != off {
				t.Errorf("%s split %d: the reader stopped at offset %d, End says %d (%v)", spec.Connector, s, off, end, ok)
			}
		}
	}
	endless, _ := Open(Spec{Connector: "datagen", Columns: []Column{{"v", types.TInt64}}})
	if _, ok := endless.End(0); ok {
		t.Error("an endless datagen split has an end")
	}
}

// TestNexmarkSkipsExtraNobodyReads: told that extra is not read, the
// source leaves it NULL and every other field as it was.
func TestNexmarkSkipsExtraNobodyReads(t *testing.T) {
	for _, kind := range []string{"Bid", "Auction", "Person"} {
		cols := map[string][]Column{"Bid": bidColumns,
			"Auction": {{Name: "id", Type: types.TInt64}, {Name: "reserve", Type: types.TInt64}, {Name: "extra", Type: types.TVarchar}},
			"Person":  {{Name: "id", Type: types.TInt64}, {Name: "name", Type: types.TVarchar}, {Name: "extra", Type: types.TVarchar}}}[kind]
		spec := Spec{Connector: "nexmark", Columns: cols, Options: map[string]string{
			"nexmark.table.type": kind, "nexmark.event.num": "3000", "nexmark.min.event.gap.in.ns": "0"}}
		full, err := Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		lean, err := Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		read := make([]bool, len(cols))
		extra := -1
		for i, c := range cols {
			read[i] = c.Name != "extra"
			if c.Name == "extra" {
				extra = i
			}
		}
		lean.(Narrower).ReadOnly(read)
		want, got := readAll(t, full, 0, 0, 100), readAll(t, lean, 0, 0, 100)
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("%s: %d rows read lean, %d in full", kind, len(got), len(want))
		}
		for i := range want {
			if got[i][extra] != nil || want[i][extra] == "" {
				t.Fatalf("%s row %d: extra %q lean, %q in full", kind, i, got[i][extra], want[i][extra])
			}
			got[i][extra] = want[i][extra]
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("%s row %d: %v lean, %v in full", kind, i, got[i], want[i])
			}
		}
	}
}

var auctionColumns = []Column{{"id", types.TInt64}, {"item_name", types.TVarchar}, {"description", types.TVarchar},
	{"initial_bid", types.TInt64}, {"reserve", types.TInt64}, {"date_time", types.TTimestamp},
	{"expires", types.TTimestamp}, {"seller", types.TInt64}, {"category", types.TInt64}, {"extra", types.TVarchar}}

// TestNexmarkFillsNoColumnNobodyReads: each unread column (the row id
// too) comes as NULLs the chunk's length, every read column as it comes
// in full, whatever the mask (and whatever the generator leaves out for
// it).
func TestNexmarkFillsNoColumnNobodyReads(t *testing.T) {
	fillsNoColumnNobodyReads(t, "Bid", bidColumns, 5)
	fillsNoColumnNobodyReads(t, "Auction", auctionColumns, 37)
}

func fillsNoColumnNobodyReads(t *testing.T, kind string, cols []Column, step int) {
	spec := Spec{Connector: "nexmark", RowID: true, Columns: cols, Options: map[string]string{
		"nexmark.table.type": kind, "nexmark.event.num": "5000", "nexmark.min.event.gap.in.ns": "0",
		"nexmark.max.chunk.size": "100"}}
	full, err := Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, full, 0, 0, 70)
	n := len(cols) + 1
	for mask := 0; mask < 1<<n; mask += step {
		read := make([]bool, n)
		for i := range read {
			read[i] = mask&(1<<i) != 0
		}
		lean, err := Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		lean.(Narrower).ReadOnly(read)
		got := readAll(t, lean, 0, 0, 70)
		if len(got) != len(want) {
			t.Fatalf("mask %b: %d rows read lean, %d in full", mask, len(got), len(want))
		}
		for r := range want {
			for i := range read {
				if w := want[r][i]; read[i] && got[r][i] != w || !read[i] && got[r][i] != nil {
					t.Fatalf("mask %b row %d column %d: %v lean, %v in full", mask, r, i, got[r][i], w)
				}
			}
		}
	}
}
