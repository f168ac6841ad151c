package codec

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

func TestValueRoundTripExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 0, 20).Draw(t, "types")
		row := genRow(t, ts, "row")
		prefix := []byte("pre")
		enc, err := EncodeValue(prefix, row, ts)
		if err != nil {
			t.Fatalf("EncodeValue(%v): %v", row, err)
		}
		if !bytes.HasPrefix(enc, prefix) {
			t.Fatalf("EncodeValue clobbered dst: %x", enc)
		}
		got, err := DecodeValue(enc[len(prefix):], ts)
		if err != nil {
			t.Fatalf("DecodeValue(%x): %v", enc, err)
		}
		for i := range row {
			if !exactEqual(row[i], got[i]) {
				t.Fatalf("column %d (%s): decoded %#v, encoded %#v", i, ts[i], got[i], row[i])
			}
		}
	})
}

// TestValueKeepsRepresentation pins the cases the key encoding normalizes
// away and the value encoding must not.
func TestValueKeepsRepresentation(t *testing.T) {
	big := &apd.Decimal{Exponent: -40}
	big.Coeff.SetString("123456789012345678901234567890123456789000", 10)
	row := types.Row{apd.New(100, -2), &apd.Decimal{Negative: true, Exponent: -3}, big,
		types.DInterval{Days: 1}, types.DInterval{Micros: types.MicrosPerDay}}
	ts := []types.Type{types.TDecimal, types.TDecimal, types.TDecimal, types.TInterval, types.TInterval}
	enc, err := EncodeValue(nil, row, ts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeValue(enc, ts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range row {
		if !exactEqual(row[i], got[i]) {
			t.Errorf("column %d: got %v, want %v", i, got[i], row[i])
		}
	}
}

func TestValueDoesNotAlias(t *testing.T) {
	ts := []types.Type{types.TBytea}
	enc, err := EncodeValue(nil, types.Row{[]byte("abc")}, ts)
	if err != nil {
		t.Fatal(err)
	}
	row, err := DecodeValue(enc, ts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range enc {
		enc[i] = 'z'
	}
	if got := row[0].([]byte); string(got) != "abc" {
		t.Fatalf("decoded bytes changed with the buffer: %q", got)
	}
}

func TestValueErrors(t *testing.T) {
	ts := []types.Type{types.TInt16, types.TVarchar}
	if _, err := EncodeValue(nil, types.Row{"x", "y"}, ts); err == nil {
		t.Error("wrong datum type: no error")
	}
	if _, err := EncodeValue(nil, types.Row{int64(1)}, ts); err == nil {
		t.Error("short row: no error")
	}
	good, err := EncodeValue(nil, types.Row{int64(300), "hello"}, ts)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := [][]byte{
		nil,                            // no bitmap
		good[:len(good)-1],             // truncated string
		append(bytes.Clone(good), 0),   // trailing byte
		{0x04},                         // null bit past the last column
		{0x00, 0xFF, 0xFF, 0xFF, 0x0F}, // smallint out of range
		{0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}, // varint overflow
	}
	for _, c := range corrupt {
		if _, err := DecodeValue(c, ts); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeValue(%x): err %v, want ErrCorrupt", c, err)
		}
	}
}
