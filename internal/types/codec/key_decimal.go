package codec

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/cockroachdb/apd/v3"
)

type decimal = apd.Decimal

// Numeric keys. A finite non-zero value is written as 0.d1d2…dk × 10^E with
// d1 ≠ 0 and dk ≠ 0 (trailing zeros dropped, so 1.0 and 1.00 are identical):
//
//	tag | ordered varint E | base-100 digit pairs
//
// Larger E means a larger magnitude; for equal E the digit string decides,
// and a string that is a prefix of another is smaller (0.12 < 0.123). Each
// pair p (0–99) is written as 2p+1, except the last as 2p, so the last byte
// is the only even one: the encoding ends itself, and at the first differing
// pair a shorter string (even byte 2p) sorts below a longer one with the
// same pair (2p+1). Negative numbers write the same bytes inverted, which
// reverses their order. The tags put the forms in Postgres order:
// -Infinity < negatives < 0 < positives < Infinity < NaN.
const (
	decNegInf = 0x02
	decNeg    = 0x03
	decZero   = 0x04
	decPos    = 0x05
	decPosInf = 0x06
	decNaN    = 0x07
)

// maxExpandDigits bounds how far a decoded key is widened from exponent
// form (1E+2) into plain digits (100); beyond it the value keeps a positive
// exponent, equal in value, so a hostile key cannot make decoding allocate
// without bound.
const maxExpandDigits = 1000

func appendKeyDecimal(dst []byte, d *decimal) ([]byte, error) {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, decNaN), nil
	case apd.Infinite:
		if d.Negative {
			return append(dst, decNegInf), nil
		}
		return append(dst, decPosInf), nil
	case apd.Finite:
	default:
		return dst, fmt.Errorf("codec: numeric of unknown form %d", d.Form)
	}
	switch d.Coeff.Sign() {
	case 0:
		return append(dst, decZero), nil
	case -1:
		return dst, fmt.Errorf("codec: numeric with negative coefficient")
	}
	var scratch [40]byte
	digits := d.Coeff.Append(scratch[:0], 10)
	e := int64(d.Exponent) + int64(len(digits))
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if !d.Negative {
		dst = append(dst, decPos)
		dst = appendOrderedInt(dst, e)
		return appendDigitPairs(dst, digits), nil
	}
	dst = append(dst, decNeg)
	start := len(dst)
	dst = appendOrderedInt(dst, e)
	dst = appendDigitPairs(dst, digits)
	invert(dst[start:])
	return dst, nil
}

// appendDigitPairs writes ASCII digits (no trailing zero) as base-100 pairs.
func appendDigitPairs(dst, digits []byte) []byte {
	for i := 0; i < len(digits); i += 2 {
		p := (digits[i] - '0') * 10
		if i+1 < len(digits) {
			p += digits[i+1] - '0'
		}
		if i+2 >= len(digits) {
			return append(dst, 2*p)
		}
		dst = append(dst, 2*p+1)
	}
	return dst
}

// appendOrderedInt writes v so that byte order is numeric order: a header
// byte (0x80+n for v ≥ 0, 0x7F-n for v < 0) then n big-endian bytes, n the
// minimal width. Negative values store the complement of ^v, so a larger
// magnitude gives a smaller header and smaller bytes. Exponents are small,
// so most take 1–2 bytes.
func appendOrderedInt(dst []byte, v int64) []byte {
	if v >= 0 {
		n := byteLen(uint64(v))
		dst = append(dst, byte(0x80+n))
		return appendBE(dst, uint64(v), n)
	}
	w := uint64(^v)
	n := byteLen(w)
	dst = append(dst, byte(0x7F-n))
	return appendBE(dst, ^w, n)
}

func byteLen(u uint64) int { return (bits.Len64(u) + 7) / 8 }

func appendBE(dst []byte, u uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(u>>(8*i)))
	}
	return dst
}

func (r *keyReader) orderedInt() (int64, error) {
	h, err := r.byte()
	if err != nil {
		return 0, err
	}
	neg := h < 0x80
	n := int(h) - 0x80
	if neg {
		n = 0x7F - int(h)
	}
	if n > 8 {
		return 0, fmt.Errorf("%w: varint header %#x", ErrCorrupt, h)
	}
	var u uint64
	for range n {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		u = u<<8 | uint64(c)
	}
	if !neg {
		if u > math.MaxInt64 {
			return 0, fmt.Errorf("%w: varint overflow", ErrCorrupt)
		}
		return int64(u), nil
	}
	w := ^u
	if n < 8 {
		w &= 1<<(8*n) - 1
	}
	if w > math.MaxInt64 {
		return 0, fmt.Errorf("%w: varint overflow", ErrCorrupt)
	}
	return ^int64(w), nil
}

func (r *keyReader) decimal() (any, error) {
	tag, err := r.byte()
	if err != nil {
		return nil, err
	}
	switch tag {
	case decNaN:
		return &decimal{Form: apd.NaN}, nil
	case decPosInf:
		return &decimal{Form: apd.Infinite}, nil
	case decNegInf:
		return &decimal{Form: apd.Infinite, Negative: true}, nil
	case decZero:
		return &decimal{}, nil
	case decPos, decNeg:
	default:
		return nil, fmt.Errorf("%w: numeric tag %#x", ErrCorrupt, tag)
	}
	if tag == decNeg {
		r.inv ^= 0xFF
		defer func() { r.inv ^= 0xFF }()
	}
	d, err := r.finiteDecimal()
	if err != nil {
		return nil, err
	}
	d.Negative = tag == decNeg
	return d, nil
}

// finiteDecimal reads E and the digit pairs and builds the normalized value.
func (r *keyReader) finiteDecimal() (*decimal, error) {
	e, err := r.orderedInt()
	if err != nil {
		return nil, err
	}
	digits, err := r.digitPairs()
	if err != nil {
		return nil, err
	}
	exp := e - int64(len(digits))
	if exp > 0 && int64(len(digits))+exp <= maxExpandDigits {
		for ; exp > 0; exp-- {
			digits = append(digits, '0')
		}
	}
	if exp < math.MinInt32 || exp > math.MaxInt32 {
		return nil, fmt.Errorf("%w: numeric exponent %d out of range", ErrCorrupt, exp)
	}
	d := &decimal{Exponent: int32(exp)}
	setCoeffDigits(&d.Coeff, digits)
	return d, nil
}

func (r *keyReader) digitPairs() ([]byte, error) {
	var digits []byte
	for {
		c, err := r.byte()
		if err != nil {
			return nil, err
		}
		if c == 0 || c > 199 {
			return nil, fmt.Errorf("%w: numeric digit byte %#x", ErrCorrupt, c)
		}
		p := c / 2
		digits = append(digits, '0'+p/10, '0'+p%10)
		if c%2 == 0 {
			break
		}
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 || digits[0] == '0' {
		return nil, fmt.Errorf("%w: numeric digits not normalized", ErrCorrupt)
	}
	return digits, nil
}

// setCoeffDigits sets z to the value of ASCII digits, without the string
// allocation for the common case of at most 19 digits.
func setCoeffDigits(z *apd.BigInt, digits []byte) {
	if len(digits) <= 19 {
		var u uint64
		for _, c := range digits {
			u = u*10 + uint64(c-'0')
		}
		z.SetUint64(u)
		return
	}
	z.SetString(string(digits), 10) // digits are validated ASCII: cannot fail
}
