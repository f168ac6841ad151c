package codec

import (
	"bytes"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// typesFromSeed turns fuzz bytes into a list of column types, so the
// fuzzer explores type lists and payloads together.
func typesFromSeed(seed []byte) []types.Type {
	ts := make([]types.Type, 0, len(seed))
	for _, b := range seed {
		ts = append(ts, allTypes[int(b)%len(allTypes)])
	}
	return ts
}

func ordersFromSeed(seed []byte) []Order {
	os := make([]Order, len(seed))
	for i, b := range seed {
		os[i] = Order{Desc: b&0x40 != 0, NullsFirst: b&0x80 != 0}
	}
	return os
}

func addValueSeeds(f *testing.F) {
	ts := []types.Type{types.TInt64, types.TVarchar, types.TDecimal, types.TInterval, types.TFloat64}
	for _, row := range []types.Row{
		{int64(-5), "a\x00b", mustDecimal(f, "-12.340"), types.DInterval{Months: 1, Days: -2, Micros: 3}, 1.5},
		{nil, nil, mustDecimal(f, "1234567890123456789012345678901234567890"), nil, nil},
	} {
		enc, err := EncodeValue(nil, row, ts)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte{3, 7, 6, 13, 5}, enc)
	}
	arr := []types.Type{types.ArrayOf(types.TInt32), types.ArrayOf(types.TVarchar)}
	enc, err := EncodeValue(nil, types.Row{types.DArray{int64(1), nil, int64(-3)}, types.DArray{"a", ""}}, arr)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{14, 15}, enc)
}

// FuzzDecodeValue: arbitrary bytes never panic; whatever decodes
// re-encodes and decodes to the same row.
func FuzzDecodeValue(f *testing.F) {
	addValueSeeds(f)
	f.Fuzz(func(t *testing.T, typeSeed, data []byte) {
		ts := typesFromSeed(typeSeed)
		row, err := DecodeValue(data, ts)
		if err != nil {
			return
		}
		enc, err := EncodeValue(nil, row, ts)
		if err != nil {
			t.Fatalf("decoded row %v does not re-encode: %v", row, err)
		}
		again, err := DecodeValue(enc, ts)
		if err != nil {
			t.Fatalf("re-encoded row does not decode: %v", err)
		}
		for i := range row {
			if !exactEqual(row[i], again[i]) {
				t.Fatalf("column %d: %v then %v", i, row[i], again[i])
			}
		}
	})
}

// FuzzDecodeKey: arbitrary bytes never panic; whatever decodes re-encodes
// to a key that decodes to equal values and is a fixed point.
func FuzzDecodeKey(f *testing.F) {
	ts := []types.Type{types.TDecimal, types.TVarchar, types.TInterval}
	key, err := EncodeKey(nil, types.Row{mustDecimal(f, "-0.00123"), "x\x00", types.DInterval{Days: 40}}, ts,
		[]Order{{Desc: true}, {}, {NullsFirst: true}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{6, 7, 13}, []byte{0x40, 0x00, 0x80}, key)
	arr := []types.Type{types.ArrayOf(types.TInt32), types.ArrayOf(types.TVarchar)}
	key, err = EncodeKey(nil, types.Row{types.DArray{int64(1), nil}, types.DArray{"b", "a\x00"}}, arr,
		[]Order{{Desc: true}, {}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{14, 15}, []byte{0x40, 0x00}, key)
	f.Fuzz(func(t *testing.T, typeSeed, orderSeed, data []byte) {
		ts := typesFromSeed(typeSeed)
		orders := ordersFromSeed(orderSeed)
		if len(orders) < len(ts) {
			orders = nil
		}
		row, _, err := DecodeKey(data, ts, orders)
		if err != nil {
			return
		}
		enc, err := EncodeKey(nil, row, ts, orders)
		if err != nil {
			t.Fatalf("decoded row %v does not re-encode: %v", row, err)
		}
		again, rest, err := DecodeKey(enc, ts, orders)
		if err != nil || len(rest) != 0 {
			t.Fatalf("re-encoded key %x: rest %x, err %v", enc, rest, err)
		}
		for i := range row {
			if (row[i] == nil) != (again[i] == nil) || row[i] != nil && refCompare(row[i], again[i]) != 0 {
				t.Fatalf("column %d: %v then %v", i, row[i], again[i])
			}
		}
		if enc2, _ := EncodeKey(nil, again, ts, orders); !bytes.Equal(enc, enc2) {
			t.Fatalf("key not a fixed point: %x then %x", enc, enc2)
		}
	})
}

// FuzzKeyRoundTrip drives the rapid round-trip property from fuzz input,
// so coverage guidance finds the rows it explores.
func FuzzKeyRoundTrip(f *testing.F) {
	f.Fuzz(rapid.MakeFuzz(checkKeyRoundTrip))
}
