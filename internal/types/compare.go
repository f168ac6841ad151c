package types

import (
	"bytes"
	"cmp"
	"math"
	"math/bits"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Compare orders two non-NULL datums of the same SQL type the way Postgres
// does: NaN is equal to itself and greater than every other float, -0 equals
// 0, numerics compare by value (1.0 = 1.00), intervals compare by their
// normalized length (1 month = 30 days, 1 day = 24 hours). NULLs are the
// caller's business; Compare treats nil as smaller than everything.
func Compare(a, b Datum) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		default:
			return 1
		}
	}
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return CompareFloat(x, b.(float64))
	case *apd.Decimal:
		return CompareDecimal(x, b.(*apd.Decimal))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case DDate:
		return cmp.Compare(x, b.(DDate))
	case DTime:
		return cmp.Compare(x, b.(DTime))
	case DTimestamp:
		return cmp.Compare(x, b.(DTimestamp))
	case DTimestamptz:
		return cmp.Compare(x, b.(DTimestamptz))
	case DInterval:
		return CompareInterval(x, b.(DInterval))
	case DArray:
		return CompareArray(x, b.(DArray))
	}
	panic("types: Compare of unknown datum")
}

// CompareDecimal orders numerics as Postgres does: NaN is equal to itself
// and greater than every other value, Infinity included. apd's Cmp leaves
// NaN undefined, so it is handled first.
func CompareDecimal(x, y *apd.Decimal) int {
	xn, yn := x.Form == apd.NaN || x.Form == apd.NaNSignaling, y.Form == apd.NaN || y.Form == apd.NaNSignaling
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return x.Cmp(y)
}

// CompareFloat orders floats as Postgres does: NaN sorts last and equals
// itself.
func CompareFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp.Compare(x, y) // -0 == 0 under <
}

// IntervalSpan returns the interval's normalized length as a 128-bit number
// of microseconds (hi, lo), months counted as 30 days. Intervals that
// compare equal have equal spans.
func IntervalSpan(v DInterval) (hi int64, lo uint64) {
	days := int64(v.Months)*DaysPerMonth + int64(v.Days)
	// days * MicrosPerDay fits in 128 bits; compute it with 64-bit halves.
	return mul128Add(days, MicrosPerDay, v.Micros)
}

// mul128Add returns a*b + c as a signed 128-bit value.
func mul128Add(a, b, c int64) (hi int64, lo uint64) {
	neg := (a < 0) != (b < 0)
	ua, ub := absU(a), absU(b)
	phi, plo := bits.Mul64(ua, ub)
	if neg {
		plo = ^plo + 1
		phi = ^phi
		if plo == 0 {
			phi++
		}
	}
	// add c sign-extended
	chi := uint64(0)
	if c < 0 {
		chi = math.MaxUint64
	}
	nlo := plo + uint64(c)
	carry := uint64(0)
	if nlo < plo {
		carry = 1
	}
	return int64(phi + chi + carry), nlo
}

func absU(x int64) uint64 {
	if x < 0 {
		return uint64(-x)
	}
	return uint64(x)
}

// CompareInterval orders intervals by normalized length.
func CompareInterval(x, y DInterval) int {
	xh, xl := IntervalSpan(x)
	yh, yl := IntervalSpan(y)
	if c := cmp.Compare(xh, yh); c != 0 {
		return c
	}
	return cmp.Compare(xl, yl)
}

// CompareRows compares rows column by column with Compare.
func CompareRows(a, b Row) int {
	for i := range a {
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// OrderInt64 returns d as an int64 that orders as d does, when d is an
// integer, a date, a time or a timestamp (their representations).
func OrderInt64(d Datum) (int64, bool) {
	switch v := d.(type) {
	case int64:
		return v, true
	case DTimestamp:
		return int64(v), true
	case DTimestamptz:
		return int64(v), true
	case DDate:
		return int64(v), true
	case DTime:
		return int64(v), true
	}
	return 0, false
}
