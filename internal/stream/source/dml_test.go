package source

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"pgregory.net/rapid"
)

var dmlTypes = []types.Type{types.TInt64, types.TVarchar, types.TFloat64, types.TBool, types.TInt32}

// roundTrip encodes c as a DML payload and decodes it back.
func roundTrip(t tb, c *types.Chunk) *types.Chunk {
	t.Helper()
	b, err := EncodeDML(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDML(b, dmlTypes)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestDMLRoundTrip(t *testing.T) {
	c := types.MustParseChunk(dmlTypes, `
+ 1 'a b' 1.5 true 7
- 2 NULL NULL false NULL
U- 3 'x' -0.25 NULL 1
U+ 3 'y' 2 true 2`)
	got := roundTrip(t, c)
	if got.String() != c.String() {
		t.Fatalf("round trip:\n%s\nwant\n%s", got, c)
	}
}

func TestDMLEncodesOnlyVisibleRows(t *testing.T) {
	c := types.MustParseChunk(dmlTypes[:1], "+ 1\n- 2\n+ 3")
	var vis types.Bitmap
	vis.Set(0)
	vis.Set(2)
	c.SetVisibility(vis)
	b, err := EncodeDML(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDML(b, dmlTypes[:1])
	if err != nil {
		t.Fatal(err)
	}
	if want := "+ 1\n+ 3\n"; got.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestDMLCorruption flips every bit and cuts at every length: each damaged
// payload must fail with ErrCorruptDML, and never panic.
func TestDMLCorruption(t *testing.T) {
	c := types.MustParseChunk(dmlTypes, "+ 1 'abc' 1.5 true 7\nU- 3 NULL -2 NULL 1\nU+ 3 'z' 2 true 2")
	b, err := EncodeDML(c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		for bit := range 8 {
			bad := append([]byte(nil), b...)
			bad[i] ^= 1 << bit
			if _, err := DecodeDML(bad, dmlTypes); !errors.Is(err, ErrCorruptDML) {
				t.Fatalf("flip byte %d bit %d: err = %v", i, bit, err)
			}
		}
	}
	for n := range len(b) {
		if _, err := DecodeDML(b[:n], dmlTypes); !errors.Is(err, ErrCorruptDML) {
			t.Fatalf("cut at %d: err = %v", n, err)
		}
	}
	other := append([]types.Type{types.TVarchar}, dmlTypes[1:]...)
	if _, err := DecodeDML(b, other); !errors.Is(err, ErrCorruptDML) {
		t.Fatalf("wrong types: err = %v", err)
	}
	if _, err := DecodeDML(b, dmlTypes[:2]); !errors.Is(err, ErrCorruptDML) {
		t.Fatalf("wrong column count: err = %v", err)
	}
}

func genRow(t *rapid.T) types.Row {
	maybe := func(label string, d types.Datum) types.Datum {
		if rapid.IntRange(0, 4).Draw(t, label+"null") == 0 {
			return nil
		}
		return d
	}
	return types.Row{
		maybe("i", rapid.Int64().Draw(t, "i")),
		maybe("s", rapid.String().Draw(t, "s")),
		maybe("f", rapid.Float64().Draw(t, "f")),
		maybe("b", rapid.Bool().Draw(t, "b")),
		maybe("j", int64(rapid.Int32().Draw(t, "j"))),
	}
}

func TestDMLRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 20).Draw(t, "n")
		bld := types.NewBuilder(dmlTypes, n+1)
		for range n {
			op := types.Op(rapid.IntRange(0, 3).Draw(t, "op"))
			bld.Append(op, genRow(t))
		}
		c := bld.Take()
		if c == nil {
			c = types.NewChunk(emptyCols(dmlTypes), nil)
		}
		got := roundTrip(t, c)
		if got.Capacity() != c.Capacity() {
			t.Fatalf("rows %d, want %d", got.Capacity(), c.Capacity())
		}
		for i := range c.Capacity() {
			if got.Op(i) != c.Op(i) || types.CompareRows(got.Row(i), c.Row(i)) != 0 {
				t.Fatalf("row %d: %v %v, want %v %v", i, got.Op(i), got.Row(i), c.Op(i), c.Row(i))
			}
		}
	})
}

func emptyCols(ts []types.Type) []types.Column {
	cols := make([]types.Column, len(ts))
	for i, t := range ts {
		cols[i] = types.MustColumn(t, 0)
	}
	return cols
}

// TestRowSpansLocateEveryRow: each span of RowSpans decodes to its row.
func TestRowSpansLocateEveryRow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 20).Draw(t, "n")
		bld := types.NewBuilder(dmlTypes, n+1)
		for range n {
			bld.Append(types.Insert, genRow(t))
		}
		c := bld.Take()
		payload, err := EncodeDML(c)
		if err != nil {
			t.Fatal(err)
		}
		spans, err := RowSpans(payload, dmlTypes)
		if err != nil || len(spans) != 2*n {
			t.Fatalf("RowSpans: %d spans, %v; want %d", len(spans), err, 2*n)
		}
		for i := range n {
			row, err := codec.DecodeValue(payload[spans[2*i]:spans[2*i+1]], dmlTypes)
			if err != nil || types.CompareRows(row, c.Row(i)) != 0 {
				t.Fatalf("row %d: %v (%v), want %v", i, row, err, c.Row(i))
			}
		}
	})
}

// TestDMLRowLengths: rows whose encodings need one, two and three bytes of
// length (the encoder writes a one-byte length first and moves the row
// along for a longer one) round-trip, and their spans cover exactly their
// values.
func TestDMLRowLengths(t *testing.T) {
	ts := []types.Type{types.TInt64, types.TVarchar}
	for _, sizes := range [][]int{{0, 100, 126, 127, 128}, {200, 5, 16380, 16400, 3}, {70000}} {
		b := types.NewBuilder(ts, len(sizes)+1)
		for i, n := range sizes {
			b.Append(types.Insert, types.Row{int64(i), strings.Repeat("x", n)})
		}
		c := b.Take()
		payload, err := EncodeDML(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeDML(payload, ts)
		if err != nil || got.String() != c.String() {
			t.Fatalf("sizes %v: decoded %v", sizes, err)
		}
		spans, err := RowSpans(payload, ts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sizes {
			want, _ := codec.EncodeValueColumns(nil, c.Cols, i)
			if v := payload[spans[2*i]:spans[2*i+1]]; !bytes.Equal(v, want) {
				t.Fatalf("sizes %v: row %d spans %d bytes, want %d", sizes, i, len(v), len(want))
			}
		}
	}
}
