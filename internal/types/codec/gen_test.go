package codec

import (
	"bytes"
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// Generators and the reference order shared by the property tests.

var allTypes = []types.Type{
	types.TBool, types.TInt16, types.TInt32, types.TInt64, types.TFloat32,
	types.TFloat64, types.TDecimal, types.TVarchar, types.TBytea, types.TDate,
	types.TTime, types.TTimestamp, types.TTimestamptz, types.TInterval,
	// Arrays last, so that fuzz seeds indexing the scalars keep their meaning.
	types.ArrayOf(types.TInt32), types.ArrayOf(types.TVarchar), types.ArrayOf(types.TDecimal),
	types.ArrayOf(types.TFloat64), types.ArrayOf(types.TInterval), types.ArrayOf(types.TBool),
	types.ArrayOf(types.TBytea),
}

func genType() *rapid.Generator[types.Type] { return rapid.SampledFrom(allTypes) }

func genOrder() *rapid.Generator[Order] {
	return rapid.Custom(func(t *rapid.T) Order {
		return Order{Desc: rapid.Bool().Draw(t, "desc"), NullsFirst: rapid.Bool().Draw(t, "nullsFirst")}
	})
}

// genDatum draws a value of type ty, NULL about one time in eight.
func genDatum(t *rapid.T, ty types.Type, label string) types.Datum {
	if rapid.IntRange(0, 7).Draw(t, label+"-null") == 0 {
		return nil
	}
	switch ty.ID {
	case types.Bool:
		return rapid.Bool().Draw(t, label)
	case types.Int16:
		return int64(rapid.Int16().Draw(t, label))
	case types.Int32:
		return int64(rapid.Int32().Draw(t, label))
	case types.Int64:
		return rapid.Int64().Draw(t, label)
	case types.Float32:
		return float64(float32(genFloat(t, label)))
	case types.Float64:
		return genFloat(t, label)
	case types.Decimal:
		return genDecimal(t, label)
	case types.Varchar:
		return string(genBytes(t, label))
	case types.Bytea:
		return genBytes(t, label)
	case types.Array:
		return genArray(t, ty.ElemType(), label)
	}
	return genTemporal(t, ty, label)
}

// genArray draws a short array (often empty or a prefix-sharing one, which
// is where the order of lengths matters) with NULL elements mixed in.
func genArray(t *rapid.T, elem types.Type, label string) types.DArray {
	n := rapid.IntRange(0, 4).Draw(t, label+"-len")
	a := make(types.DArray, n)
	for i := range a {
		a[i] = genDatum(t, elem, label+"-elem")
	}
	return a
}

func genTemporal(t *rapid.T, ty types.Type, label string) types.Datum {
	switch ty.ID {
	case types.Date:
		return types.DDate(rapid.Int32().Draw(t, label))
	case types.Time:
		return types.DTime(rapid.Int64Range(0, types.MicrosPerDay).Draw(t, label))
	case types.Timestamp:
		return types.DTimestamp(rapid.Int64().Draw(t, label))
	case types.Timestamptz:
		return types.DTimestamptz(rapid.Int64().Draw(t, label))
	}
	// Interval: small fields collide on span often; full range hits the
	// 128-bit arithmetic and the clamping in intervalFromSpan.
	if rapid.Bool().Draw(t, label+"-small") {
		return types.DInterval{
			Months: rapid.Int32Range(-3, 3).Draw(t, label+"-m"),
			Days:   rapid.Int32Range(-95, 95).Draw(t, label+"-d"),
			Micros: rapid.Int64Range(-3, 3).Draw(t, label+"-us") * types.MicrosPerHour * 8,
		}
	}
	return types.DInterval{
		Months: rapid.Int32().Draw(t, label+"-m"),
		Days:   rapid.Int32().Draw(t, label+"-d"),
		Micros: rapid.Int64().Draw(t, label+"-us"),
	}
}

func genFloat(t *rapid.T, label string) float64 {
	special := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1),
		math.Float64frombits(0xFFF8000000000001), math.SmallestNonzeroFloat64, -1, 1}
	if rapid.Bool().Draw(t, label+"-special") {
		return rapid.SampledFrom(special).Draw(t, label)
	}
	return rapid.Float64().Draw(t, label)
}

// genBytes favours the bytes the string escaping cares about.
func genBytes(t *rapid.T, label string) []byte {
	if rapid.Bool().Draw(t, label+"-plain") {
		return []byte(rapid.String().Draw(t, label))
	}
	return rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 0xFE, 0xFF, 'a', 'b'}), 0, 6).Draw(t, label)
}

// genDecimal draws every form, small and huge coefficients, and exponents
// near zero and far from it.
func genDecimal(t *rapid.T, label string) *apd.Decimal {
	switch rapid.IntRange(0, 9).Draw(t, label+"-form") {
	case 0:
		return &apd.Decimal{Form: apd.NaN}
	case 1:
		return &apd.Decimal{Form: apd.Infinite, Negative: rapid.Bool().Draw(t, label+"-neg")}
	}
	d := &apd.Decimal{Negative: rapid.Bool().Draw(t, label+"-neg")}
	if rapid.IntRange(0, 4).Draw(t, label+"-big") == 0 {
		digits := rapid.StringMatching(`[1-9][0-9]{18,45}`).Draw(t, label+"-digits")
		if _, ok := d.Coeff.SetString(digits, 10); !ok {
			panic("bad digits " + digits)
		}
	} else {
		d.Coeff.SetUint64(rapid.Uint64Range(0, 2000).Draw(t, label+"-coeff"))
	}
	if rapid.IntRange(0, 9).Draw(t, label+"-farexp") == 0 {
		d.Exponent = rapid.Int32Range(-1<<20, 1<<20).Draw(t, label+"-exp")
	} else {
		d.Exponent = rapid.Int32Range(-8, 8).Draw(t, label+"-exp")
	}
	return d
}

// genRow draws a row of the given types.
func genRow(t *rapid.T, ts []types.Type, label string) types.Row {
	row := make(types.Row, len(ts))
	for i, ty := range ts {
		row[i] = genDatum(t, ty, label)
	}
	return row
}

// twin returns a datum that compares equal to d but is (where the type
// allows) represented differently: -0 for 0, another NaN, 1.00 for 1,
// '24 hours' for '1 day'.
func twin(t *rapid.T, d types.Datum, label string) types.Datum {
	switch x := d.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return math.Float64frombits(0xFFF8000000000123)
		case x == 0 && math.Signbit(x):
			return 0.0
		case x == 0:
			return math.Copysign(0, -1)
		}
	case *apd.Decimal:
		return twinDecimal(t, x, label)
	case []byte:
		return bytes.Clone(x)
	case types.DInterval:
		return twinInterval(x)
	case types.DArray:
		out := make(types.DArray, len(x))
		for i, e := range x {
			if e != nil {
				out[i] = twin(t, e, label)
			}
		}
		return out
	}
	return d
}

func twinDecimal(t *rapid.T, x *apd.Decimal, label string) *apd.Decimal {
	y := &apd.Decimal{Form: x.Form, Negative: x.Negative, Exponent: x.Exponent}
	y.Coeff.Set(&x.Coeff)
	if x.Form != apd.Finite {
		return y
	}
	if x.Coeff.Sign() == 0 {
		y.Negative = !x.Negative
		y.Exponent = rapid.Int32Range(-5, 5).Draw(t, label+"-zexp")
		return y
	}
	k := rapid.Int32Range(1, 4).Draw(t, label+"-scale")
	if int64(x.Exponent)-int64(k) < math.MinInt32 {
		return y
	}
	y.Exponent -= k
	y.Coeff.Mul(&y.Coeff, apd.NewBigInt(int64(math.Pow10(int(k)))))
	return y
}

func twinInterval(x types.DInterval) types.DInterval {
	switch {
	case x.Days > math.MinInt32 && x.Micros <= math.MaxInt64-types.MicrosPerDay:
		return types.DInterval{Months: x.Months, Days: x.Days - 1, Micros: x.Micros + types.MicrosPerDay}
	case x.Months > math.MinInt32 && x.Days <= math.MaxInt32-types.DaysPerMonth:
		return types.DInterval{Months: x.Months - 1, Days: x.Days + types.DaysPerMonth, Micros: x.Micros}
	}
	return x
}

// refCompare is the SQL order of two non-NULL datums: types.Compare, except
// that numeric NaN equals itself and sorts above everything, as Postgres
// orders it (apd's Cmp leaves NaN undefined).
func refCompare(a, b types.Datum) int {
	da, aok := a.(*apd.Decimal)
	db, bok := b.(*apd.Decimal)
	if aok && bok {
		an, bn := isDecNaN(da), isDecNaN(db)
		switch {
		case an && bn:
			return 0
		case an:
			return 1
		case bn:
			return -1
		}
	}
	return types.Compare(a, b)
}

func isDecNaN(d *apd.Decimal) bool { return d.Form == apd.NaN || d.Form == apd.NaNSignaling }

// refCompareRows is the SQL ORDER BY comparison of two rows.
func refCompareRows(a, b types.Row, orders []Order) int {
	for i := range a {
		o := orderAt(orders, i)
		var c int
		switch {
		case a[i] == nil && b[i] == nil:
			continue
		case a[i] == nil, b[i] == nil:
			c = 1 // the NULL one sorts later...
			if o.NullsFirst {
				c = -1 // ...or earlier
			}
			if b[i] == nil {
				c = -c
			}
			return c
		}
		c = refCompare(a[i], b[i])
		if o.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// exactEqual reports whether two datums are the same value in the same
// representation (scale, interval fields, float bits).
func exactEqual(a, b types.Datum) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case *apd.Decimal:
		y, ok := b.(*apd.Decimal)
		return ok && x.Form == y.Form && x.Negative == y.Negative && x.Exponent == y.Exponent &&
			x.Coeff.Cmp(&y.Coeff) == 0
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case types.DArray:
		y, ok := b.(types.DArray)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !exactEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// mustDecimal parses with apd's own parser (not types.ParseDatum, which is
// being rewritten), for readable fixtures.
func mustDecimal(t interface{ Fatal(...any) }, s string) *apd.Decimal {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
