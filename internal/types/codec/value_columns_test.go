package codec

import (
	"bytes"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

type testFailer interface {
	Fatal(...any)
	Fatalf(string, ...any)
}

func newColumns(t testFailer, ts []types.Type) []types.Column {
	cols := make([]types.Column, len(ts))
	for i, ty := range ts {
		c, err := types.NewColumn(ty, 4)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = c
	}
	return cols
}

// TestDecodeValueIntoMatchesDecodeValue: rows decoded into columns, several
// after one another (alone or through a ColumnDecoder's slabs), read back exactly what DecodeValue returns, and
// re-encoding a column row gives the bytes EncodeValue wrote.
func TestDecodeValueIntoMatchesDecodeValue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 0, 12).Draw(t, "types")
		n := rapid.IntRange(1, 5).Draw(t, "rows")
		cols := newColumns(t, ts)
		decode := DecodeValueInto
		if rapid.Bool().Draw(t, "slabs") {
			// Slabs of 2 numerics: rows share and span slabs.
			decode = NewColumnDecoder(2).DecodeInto
		}
		var encs [][]byte
		for r := range n {
			enc, err := EncodeValue(nil, genRow(t, ts, "row"), ts)
			if err != nil {
				t.Fatal(err)
			}
			if err := decode(enc, ts, cols); err != nil {
				t.Fatalf("row %d: DecodeValueInto(%x): %v", r, enc, err)
			}
			encs = append(encs, enc)
		}
		for r, enc := range encs {
			want, err := DecodeValue(enc, ts)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cols {
				if c.Len() != n {
					t.Fatalf("column %d has %d rows, want %d", i, c.Len(), n)
				}
				if got := c.Get(r); !exactEqual(got, want[i]) {
					t.Fatalf("row %d column %d (%s): %#v, want %#v", r, i, ts[i], got, want[i])
				}
			}
			again, err := EncodeValueColumns([]byte("pre"), cols, r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again[3:], enc) || string(again[:3]) != "pre" {
				t.Fatalf("row %d: EncodeValueColumns %x, EncodeValue %x", r, again, enc)
			}
		}
	})
}

// TestDecodeValueIntoCorruptLeavesColumns: on arbitrary bytes,
// DecodeValueInto fails exactly when DecodeValue does, and a failure
// leaves every column as it was: same length, same values, and no stray
// NULL bit where the next row goes.
func TestDecodeValueIntoCorruptLeavesColumns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 1, 8).Draw(t, "types")
		good, err := EncodeValue(nil, genRow(t, ts, "good"), ts)
		if err != nil {
			t.Fatal(err)
		}
		bad := rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "bytes")
		if rapid.Bool().Draw(t, "mutate") {
			bad = append(append([]byte(nil), good...), bad...) // trailing bytes or a fixed prefix
			bad = bad[:rapid.IntRange(0, len(bad)).Draw(t, "cut")]
		}
		checkDecodeInto(t, ts, good, bad)
	})
}

// checkDecodeInto decodes good then data into fresh columns, checks that
// DecodeValueInto agrees with DecodeValue on data, and that after a
// failure a second copy of good still lands in row 1 exactly.
func checkDecodeInto(t testFailer, ts []types.Type, good, data []byte) {
	cols := newColumns(t, ts)
	if err := DecodeValueInto(good, ts, cols); err != nil {
		t.Fatal(err)
	}
	want, wantErr := DecodeValue(data, ts)
	err := DecodeValueInto(data, ts, cols)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("DecodeValueInto error %v, DecodeValue error %v", err, wantErr)
	}
	if err == nil {
		for i, c := range cols {
			if !exactEqual(c.Get(1), want[i]) {
				t.Fatalf("column %d: %#v, want %#v", i, c.Get(1), want[i])
			}
		}
		return
	}
	if err := DecodeValueInto(good, ts, cols); err != nil {
		t.Fatal(err)
	}
	row, _ := DecodeValue(good, ts)
	for i, c := range cols {
		if c.Len() != 2 {
			t.Fatalf("column %d has %d rows after a failed decode, want 2", i, c.Len())
		}
		for r := range 2 {
			if !exactEqual(c.Get(r), row[i]) {
				t.Fatalf("row %d column %d: %#v, want %#v", r, i, c.Get(r), row[i])
			}
		}
	}
}

func TestDecodeValueIntoWrongColumn(t *testing.T) {
	enc, err := EncodeValue(nil, types.Row{int64(1), "x"}, []types.Type{types.TInt64, types.TVarchar})
	if err != nil {
		t.Fatal(err)
	}
	cols := newColumns(t, []types.Type{types.TInt64, types.TInt64})
	if err := DecodeValueInto(enc, []types.Type{types.TInt64, types.TVarchar}, cols); err == nil {
		t.Fatal("decoding varchar into a bigint column succeeded")
	}
	if cols[0].Len() != 0 || cols[1].Len() != 0 {
		t.Fatalf("failed decode left rows: %d, %d", cols[0].Len(), cols[1].Len())
	}
	if err := DecodeValueInto(enc, []types.Type{types.TInt64}, cols); err == nil {
		t.Fatal("decoding into a column count that differs from the types succeeded")
	}
}

// FuzzDecodeValueInto: arbitrary bytes never panic, DecodeValueInto agrees
// with DecodeValue, and a failed decode leaves the columns untouched.
func FuzzDecodeValueInto(f *testing.F) {
	addValueSeeds(f)
	f.Fuzz(func(t *testing.T, typeSeed, data []byte) {
		ts := typesFromSeed(typeSeed)
		good, err := EncodeValue(nil, make(types.Row, len(ts)), ts) // all NULL
		if err != nil {
			t.Fatal(err)
		}
		checkDecodeInto(t, ts, good, data)
	})
}

// TestDecodeOnlyMatchesDecodeValue: DecodeOnly gives DecodeValue's value
// in every column the mask keeps and NULL in every other, and a valid row
// followed by garbage fails the same way on the kept and skipped paths
// when the corruption is in a kept column's bytes or the row's shape.
func TestDecodeOnlyMatchesDecodeValue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 1, 12).Draw(t, "types")
		only := make([]bool, len(ts))
		for i := range only {
			only[i] = rapid.Bool().Draw(t, "keep")
		}
		enc, err := EncodeValue(nil, genRow(t, ts, "row"), ts)
		if err != nil {
			t.Fatal(err)
		}
		cols := newColumns(t, ts)
		if err := NewColumnDecoder(2).DecodeOnly(enc, ts, cols, only); err != nil {
			t.Fatalf("DecodeOnly(%x): %v", enc, err)
		}
		want, err := DecodeValue(enc, ts)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			w := want[i]
			if !only[i] {
				w = nil
			}
			if c.Len() != 1 || !exactEqual(c.Get(0), w) {
				t.Fatalf("column %d (%s, kept %v): %d rows, %#v, want %#v", i, ts[i], only[i], c.Len(), c.Get(0), w)
			}
		}
		// Trailing bytes are refused whatever the mask, and leave nothing.
		if err := NewColumnDecoder(2).DecodeOnly(append(enc, 0), ts, cols, only); err == nil {
			t.Fatal("trailing byte accepted")
		}
		for i, c := range cols {
			if c.Len() != 1 {
				t.Fatalf("column %d has %d rows after a failed decode", i, c.Len())
			}
		}
	})
}

func TestDecodeOnlyMaskLength(t *testing.T) {
	ts := []types.Type{types.TInt64, types.TVarchar}
	enc, err := EncodeValue(nil, types.Row{int64(1), "x"}, ts)
	if err != nil {
		t.Fatal(err)
	}
	if err := NewColumnDecoder(1).DecodeOnly(enc, ts, newColumns(t, ts), []bool{true}); err == nil {
		t.Fatal("a mask shorter than the types was accepted")
	}
}
