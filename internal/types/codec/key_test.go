package codec

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// drawKeyShape draws column types and orders for a key of 1–4 columns.
func drawKeyShape(t *rapid.T) ([]types.Type, []Order) {
	ts := rapid.SliceOfN(genType(), 1, 4).Draw(t, "types")
	if rapid.IntRange(0, 3).Draw(t, "nilOrders") == 0 {
		return ts, nil
	}
	return ts, rapid.SliceOfN(genOrder(), len(ts), len(ts)).Draw(t, "orders")
}

// drawRowPair draws two rows; column by column b is an equal-valued twin
// of a, or independent, so that ties on leading columns are common.
func drawRowPair(t *rapid.T, ts []types.Type) (a, b types.Row) {
	a = genRow(t, ts, "a")
	b = make(types.Row, len(ts))
	for i, ty := range ts {
		if rapid.Bool().Draw(t, "tie") {
			b[i] = twin(t, a[i], "twin")
		} else {
			b[i] = genDatum(t, ty, "b")
		}
	}
	return a, b
}

// fataler is what both *testing.T and *rapid.T offer.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func mustKey(t fataler, row types.Row, ts []types.Type, orders []Order) []byte {
	t.Helper()
	k, err := EncodeKey(nil, row, ts, orders)
	if err != nil {
		t.Fatalf("EncodeKey(%v): %v", row, err)
	}
	return k
}

func sign(c int) int { return max(-1, min(1, c)) }

func TestKeyOrderMatchesSQL(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts, orders := drawKeyShape(t)
		a, b := drawRowPair(t, ts)
		got := bytes.Compare(mustKey(t, a, ts, orders), mustKey(t, b, ts, orders))
		if want := sign(refCompareRows(a, b, orders)); got != want {
			t.Fatalf("key order %d, SQL order %d\na=%v\nb=%v\ntypes=%v orders=%v", got, want, a, b, ts, orders)
		}
	})
}

func TestKeyPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts, orders := drawKeyShape(t)
		row := genRow(t, ts, "row")
		full := mustKey(t, row, ts, orders)
		k := rapid.IntRange(0, len(ts)).Draw(t, "k")
		var po []Order
		if orders != nil {
			po = orders[:k]
		}
		prefix := mustKey(t, row[:k], ts[:k], po)
		if !bytes.HasPrefix(full, prefix) {
			t.Fatalf("key of first %d columns %x is not a prefix of %x", k, prefix, full)
		}
		// Decoding the prefix columns from the full key stops exactly there.
		_, rest, err := DecodeKey(full, ts[:k], po)
		if err != nil || !bytes.Equal(rest, full[len(prefix):]) {
			t.Fatalf("DecodeKey of %d columns: rest %x, err %v; want rest %x", k, rest, err, full[len(prefix):])
		}
	})
}

func TestKeyRoundTrip(t *testing.T) {
	rapid.Check(t, checkKeyRoundTrip)
}

// checkKeyRoundTrip: decoding gives a row that compares equal column by
// column, is in normal form, and re-encodes to the same bytes.
func checkKeyRoundTrip(t *rapid.T) {
	ts, orders := drawKeyShape(t)
	row := genRow(t, ts, "row")
	key := mustKey(t, row, ts, orders)
	tail := []byte("tail")
	got, rest, err := DecodeKey(append(slices.Clip(key), tail...), ts, orders)
	if err != nil {
		t.Fatalf("DecodeKey(%x): %v", key, err)
	}
	if !bytes.Equal(rest, tail) {
		t.Fatalf("rest %q, want %q", rest, tail)
	}
	for i := range row {
		if (row[i] == nil) != (got[i] == nil) || row[i] != nil && refCompare(row[i], got[i]) != 0 {
			t.Fatalf("column %d (%s): decoded %v, encoded %v", i, ts[i], got[i], row[i])
		}
		if msg := notNormal(got[i]); msg != "" {
			t.Fatalf("column %d: decoded %v is not normalized: %s", i, got[i], msg)
		}
	}
	if again := mustKey(t, got, ts, orders); !bytes.Equal(again, key) {
		t.Fatalf("re-encoded %x, want %x", again, key)
	}
}

// notNormal describes how a decoded key datum breaks the documented normal
// form, or returns "".
func notNormal(d types.Datum) string {
	switch x := d.(type) {
	case float64:
		if math.Signbit(x) && x == 0 || math.IsNaN(x) && math.Float64bits(x) != canonicalNaN {
			return "float not canonical"
		}
	case *apd.Decimal:
		var ten, r apd.BigInt
		ten.SetInt64(10)
		r.Rem(&x.Coeff, &ten)
		switch {
		case x.Form == apd.Finite && x.Coeff.Sign() == 0 && (x.Negative || x.Exponent != 0):
			return "zero with sign or scale"
		case x.Exponent < 0 && r.Sign() == 0:
			return "trailing fractional zero"
		case x.Exponent > 0 && x.NumDigits()+int64(x.Exponent) <= maxExpandDigits:
			return "positive exponent not expanded"
		}
	case types.DInterval:
		pos := x.Months >= 0 && x.Days >= 0 && x.Micros >= 0
		neg := x.Months <= 0 && x.Days <= 0 && x.Micros <= 0
		if !pos && !neg {
			return "interval fields of mixed sign"
		}
		if x.Months != math.MaxInt32 && x.Months != math.MinInt32 && (x.Days >= 30 || x.Days <= -30) {
			return "days not folded into months"
		}
	}
	return ""
}

// TestNumericKeyOrder checks a hand-written ascending ladder, including
// the tricky neighbours (0.12 < 0.123, 9.99 < 10, -10 < -9.99), built
// directly with apd rather than through the SQL text parser.
func TestNumericKeyOrder(t *testing.T) {
	ladder := []*apd.Decimal{
		{Form: apd.Infinite, Negative: true},
		apd.New(-1, 100), apd.New(-123456789012345, -3), apd.New(-10, 0), apd.New(-999, -2),
		apd.New(-1, 0), apd.New(-123, -3), apd.New(-12, -2), apd.New(-1, -30),
		apd.New(0, 0),
		apd.New(1, -30), apd.New(12, -2), apd.New(123, -3), apd.New(125, -3), apd.New(13, -2),
		apd.New(1, 0), apd.New(999, -2), apd.New(10, 0), apd.New(1001, -2), apd.New(11, 0),
		apd.New(1, 2), apd.New(101, 0), apd.New(123456789012345, 7), apd.New(1, 1000),
		{Form: apd.Infinite},
		{Form: apd.NaN},
	}
	ts := []types.Type{types.TDecimal}
	for _, desc := range []bool{false, true} {
		orders := []Order{{Desc: desc}}
		for i := 1; i < len(ladder); i++ {
			lo := mustKey(t, types.Row{ladder[i-1]}, ts, orders)
			hi := mustKey(t, types.Row{ladder[i]}, ts, orders)
			if want := map[bool]int{false: -1, true: 1}[desc]; bytes.Compare(lo, hi) != want {
				t.Errorf("desc=%v: key(%s)=%x vs key(%s)=%x: got %d want %d",
					desc, ladder[i-1], lo, ladder[i], hi, bytes.Compare(lo, hi), want)
			}
		}
	}
}

func TestKeyEqualRepresentationsEncodeIdentically(t *testing.T) {
	pairs := []struct {
		t    types.Type
		a, b types.Datum
	}{
		{types.TDecimal, apd.New(1, 0), apd.New(100, -2)},
		{types.TDecimal, apd.New(0, 0), &apd.Decimal{Negative: true, Exponent: -3}},
		{types.TDecimal, &apd.Decimal{Form: apd.NaN}, &apd.Decimal{Form: apd.NaNSignaling, Negative: true}},
		{types.TFloat64, 0.0, math.Copysign(0, -1)},
		{types.TFloat64, math.NaN(), math.Float64frombits(0xFFF8000000000001)},
		{types.TInterval, types.DInterval{Days: 1}, types.DInterval{Micros: types.MicrosPerDay}},
		{types.TInterval, types.DInterval{Months: 1}, types.DInterval{Days: 30}},
	}
	for _, p := range pairs {
		ka := mustKey(t, types.Row{p.a}, []types.Type{p.t}, nil)
		kb := mustKey(t, types.Row{p.b}, []types.Type{p.t}, nil)
		if !bytes.Equal(ka, kb) {
			t.Errorf("%s: key(%v)=%x != key(%v)=%x", p.t, p.a, ka, p.b, kb)
		}
	}
	// Integer widths share one encoding.
	k16 := mustKey(t, types.Row{int64(-7)}, []types.Type{types.TInt16}, nil)
	k64 := mustKey(t, types.Row{int64(-7)}, []types.Type{types.TInt64}, nil)
	if !bytes.Equal(k16, k64) {
		t.Errorf("smallint key %x != bigint key %x", k16, k64)
	}
}

func TestKeyNullPlacement(t *testing.T) {
	ts := []types.Type{types.TInt64}
	for _, o := range []Order{{}, {NullsFirst: true}, {Desc: true}, {Desc: true, NullsFirst: true}} {
		orders := []Order{o}
		null := mustKey(t, types.Row{nil}, ts, orders)
		for _, v := range []int64{math.MinInt64, 0, math.MaxInt64} {
			val := mustKey(t, types.Row{v}, ts, orders)
			c := bytes.Compare(null, val)
			if o.NullsFirst && c >= 0 || !o.NullsFirst && c <= 0 {
				t.Errorf("%+v: NULL key %x vs %d key %x compare %d", o, null, v, val, c)
			}
		}
	}
}

func TestKeyErrors(t *testing.T) {
	ts := []types.Type{types.TInt64, types.TVarchar}
	cases := []struct {
		name   string
		row    types.Row
		ts     []types.Type
		orders []Order
	}{
		{"wrong datum type", types.Row{"x", "y"}, ts, nil},
		{"int32 datum", types.Row{int32(1), "y"}, ts, nil},
		{"nil decimal pointer", types.Row{(*apd.Decimal)(nil)}, []types.Type{types.TDecimal}, nil},
		{"short row", types.Row{int64(1)}, ts, nil},
		{"short orders", types.Row{int64(1), "y"}, ts, []Order{{}}},
		{"unknown type", types.Row{int64(1)}, []types.Type{{ID: 200}}, nil},
		{"untyped non-null", types.Row{"x"}, []types.Type{types.TUnknown}, nil},
	}
	for _, c := range cases {
		dst := []byte("keep")
		got, err := EncodeKey(dst, c.row, c.ts, c.orders)
		if err == nil {
			t.Errorf("%s: no error", c.name)
		}
		if string(got) != "keep" {
			t.Errorf("%s: dst changed to %q", c.name, got)
		}
	}
}

func TestDecodeKeyCorrupt(t *testing.T) {
	ts := []types.Type{types.TVarchar}
	good := mustKey(t, types.Row{"abc"}, ts, nil)
	for _, bad := range [][]byte{nil, good[:len(good)-1], {0x07}, {valueMarker, 'a', 0x00, 0x05}, {nullFirstMarker}} {
		if _, _, err := DecodeKey(bad, ts, nil); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeKey(%x): err %v, want ErrCorrupt", bad, err)
		}
	}
	// An int key out of its column's range is corrupt for smallint.
	big := mustKey(t, types.Row{int64(1 << 20)}, []types.Type{types.TInt64}, nil)
	if _, _, err := DecodeKey(big, []types.Type{types.TInt16}, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("smallint out of range: err %v", err)
	}
}

// TestAppendKeyInt64MatchesEncodeKey: the unboxed integer key is the one
// EncodeKey writes for a one-column bigint key, in either order.
func TestAppendKeyInt64MatchesEncodeKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Int64().Draw(t, "v")
		o := genOrder().Draw(t, "order")
		want, err := EncodeKey([]byte("pre"), types.Row{v}, []types.Type{types.TInt64}, []Order{o})
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendKeyInt64([]byte("pre"), v, o); !bytes.Equal(got, want) {
			t.Fatalf("AppendKeyInt64(%d, %+v) = %x, EncodeKey %x", v, o, got, want)
		}
	})
}

// TestKeyInt64DecodesAppendKeyInt64: KeyInt64 reads back every integer
// key in either order, and refuses a NULL key or one of another length.
func TestKeyInt64DecodesAppendKeyInt64(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Int64().Draw(t, "v")
		o := genOrder().Draw(t, "order")
		k := AppendKeyInt64(nil, v, o)
		if got, ok := KeyInt64(k, o); !ok || got != v {
			t.Fatalf("KeyInt64(%x, %+v) = %d, %v; want %d", k, o, got, ok, v)
		}
		if _, ok := KeyInt64(k[:len(k)-1], o); ok {
			t.Fatalf("KeyInt64 took a short key %x", k[:len(k)-1])
		}
	})
	null, err := EncodeKey(nil, types.Row{nil}, []types.Type{types.TInt64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := KeyInt64(append(null, make([]byte, 9-len(null))...), Order{}); ok {
		t.Fatalf("KeyInt64 took a NULL key %x", null)
	}
}
