package expr

import (
	"github.com/cockroachdb/apd/v3"
)

// Numeric arithmetic uses apd with Postgres's limits: up to 131072 digits
// before the decimal point and 16383 after. + - * are exact (precision 0
// disables rounding in apd), as they are in Postgres. Division follows
// Postgres's select_div_scale: at least 16 significant digits, and never
// fewer decimal places than either operand shows, rounded half away from
// zero.
const (
	numericMaxExponent = 131072
	numericMinExponent = -16383
	numericMinSigDigit = 16
	numericMaxScale    = 1000
)

// decExact is the context for exact operations. It is never modified;
// functions needing a precision copy it.
var decExact = apd.Context{
	MaxExponent: numericMaxExponent,
	MinExponent: numericMinExponent,
	Traps:       apd.DefaultTraps,
	Rounding:    apd.RoundHalfUp,
}

// decResult turns an apd outcome into a row result.
// Use it as decResult(d)(ctx.Op(d, ...)).
func decResult(d *apd.Decimal) func(apd.Condition, error) (*apd.Decimal, error) {
	return func(_ apd.Condition, err error) (*apd.Decimal, error) {
		if err != nil {
			return nil, errNumericOverflow()
		}
		return d, nil
	}
}

func decimalArith(op byte) func(*Context, *apd.Decimal, *apd.Decimal) (*apd.Decimal, error) {
	return func(_ *Context, a, b *apd.Decimal) (*apd.Decimal, error) {
		if r, ok, err := decSpecial(op, a, b); ok {
			return r, err
		}
		d := new(apd.Decimal)
		switch op {
		case '+':
			return decResult(d)(decExact.Add(d, a, b))
		case '-':
			return decResult(d)(decExact.Sub(d, a, b))
		case '*':
			return decResult(d)(decExact.Mul(d, a, b))
		case '/':
			return divDecimal(a, b)
		default:
			return modDecimal(a, b)
		}
	}
}

func isZeroDec(d *apd.Decimal) bool { return d.Form == apd.Finite && d.Coeff.Sign() == 0 }

// dscale is the number of decimal places d shows.
func dscale(d *apd.Decimal) int32 {
	if d.Exponent < 0 {
		return -d.Exponent
	}
	return 0
}

// msdPower returns the power of ten of d's most significant digit.
func msdPower(d *apd.Decimal) int64 {
	return d.NumDigits() + int64(d.Exponent) - 1
}

// nbaseWeight returns Postgres's base-10000 weight of d and its first
// base-10000 digit, which select_div_scale uses to guess the quotient's
// magnitude.
func nbaseWeight(d *apd.Decimal) (weight int64, first int64) {
	if isZeroDec(d) || d.Form != apd.Finite {
		return 0, 0
	}
	msd := msdPower(d)
	weight = floorDiv(msd, 4)
	k := msd - 4*weight + 1 // digits of the first base-10000 group, 1..4
	digits := d.Coeff.String()
	if digits[0] == '-' {
		digits = digits[1:]
	}
	for i := int64(0); i < k; i++ {
		first *= 10
		if i < int64(len(digits)) {
			first += int64(digits[i] - '0')
		}
	}
	return weight, first
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// divScale is Postgres's select_div_scale.
func divScale(a, b *apd.Decimal) int32 {
	w1, f1 := nbaseWeight(a)
	w2, f2 := nbaseWeight(b)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := numericMinSigDigit - qweight*4
	rscale = max(rscale, int64(dscale(a)), int64(dscale(b)), 0)
	return int32(min(rscale, numericMaxScale))
}

func divDecimal(a, b *apd.Decimal) (*apd.Decimal, error) {
	if r, ok, err := decSpecial('/', a, b); ok {
		return r, err
	}
	if isZeroDec(b) {
		return nil, errDivByZero()
	}
	scale := divScale(a, b)
	// Truncate a few digits past the scale, then round half away from
	// zero: truncation cannot move a value across the half-way point, so
	// the two steps round exactly once.
	c := decExact
	c.Rounding = apd.RoundDown
	digits := msdPower(a) - msdPower(b) + 1 + int64(scale) + 3
	c.Precision = uint32(max(digits, 1))
	q := new(apd.Decimal)
	if _, err := c.Quo(q, a, b); err != nil {
		return nil, errNumericOverflow()
	}
	c.Rounding = apd.RoundHalfUp
	c.Precision = uint32(max(q.NumDigits()+4, 1))
	d := new(apd.Decimal)
	return decResult(d)(c.Quantize(d, q, -scale))
}

func modDecimal(a, b *apd.Decimal) (*apd.Decimal, error) {
	if r, ok, err := decSpecial('%', a, b); ok {
		return r, err
	}
	if isZeroDec(b) {
		return nil, errDivByZero()
	}
	c := decExact
	// Enough digits for the integer quotient and the remainder, exactly.
	c.Precision = uint32(max(max(msdPower(a), msdPower(b))-int64(min(a.Exponent, b.Exponent))+2, 1))
	d := new(apd.Decimal)
	return decResult(d)(c.Rem(d, a, b))
}

func negDecimal(_ *Context, x *apd.Decimal) (*apd.Decimal, error) {
	return new(apd.Decimal).Neg(x), nil
}

func absDecimal(_ *Context, x *apd.Decimal) (*apd.Decimal, error) {
	return new(apd.Decimal).Abs(x), nil
}

// decimalFromInt returns x as a numeric.
func decimalFromInt(x int64) *apd.Decimal { return apd.New(x, 0) }
