package expr

import (
	"github.com/cockroachdb/apd/v3"
)

// Postgres numeric has NaN and ±Infinity, and its arithmetic on them is
// IEEE-like rather than an error: Infinity - Infinity, Infinity * 0,
// Infinity / Infinity and Infinity % x are NaN, anything with NaN is NaN
// (NaN / 0 included), and finite / Infinity is 0. apd treats most of these
// as invalid operations, which its traps turn into errors, so the special
// forms are decided here before apd sees them (numeric.c's
// numeric_add_opt_error and friends).

func isNaNDec(d *apd.Decimal) bool { return d.Form == apd.NaN || d.Form == apd.NaNSignaling }

func decNaN() *apd.Decimal { return &apd.Decimal{Form: apd.NaN} }

func decInf(negative bool) *apd.Decimal {
	return &apd.Decimal{Form: apd.Infinite, Negative: negative}
}

// decSpecial returns the result of a op b when either operand is NaN or
// infinite (ok true), or ok false when both are finite. An error is only
// division or modulo of a non-NaN by zero.
func decSpecial(op byte, a, b *apd.Decimal) (d *apd.Decimal, ok bool, err error) {
	if a.Form == apd.Finite && b.Form == apd.Finite {
		return nil, false, nil
	}
	if isNaNDec(a) || isNaNDec(b) {
		return decNaN(), true, nil
	}
	switch op {
	case '+', '-':
		return decSpecialAdd(op, a, b), true, nil
	case '*':
		if isZeroDec(a) || isZeroDec(b) {
			return decNaN(), true, nil
		}
		return decInf(a.Negative != b.Negative), true, nil
	case '/':
		if isZeroDec(b) {
			return nil, true, errDivByZero()
		}
		if a.Form == apd.Infinite {
			if b.Form == apd.Infinite {
				return decNaN(), true, nil
			}
			return decInf(a.Negative != b.Negative), true, nil
		}
		return apd.New(0, 0), true, nil // finite / ±Infinity
	default: // '%'
		if isZeroDec(b) {
			return nil, true, errDivByZero()
		}
		if a.Form == apd.Infinite {
			return decNaN(), true, nil
		}
		return new(apd.Decimal).Set(a), true, nil // finite % ±Infinity
	}
}

// decSpecialAdd is a + b or a - b with at least one infinite operand.
func decSpecialAdd(op byte, a, b *apd.Decimal) *apd.Decimal {
	bNeg := b.Negative != (op == '-')
	switch {
	case a.Form == apd.Infinite && b.Form == apd.Infinite:
		if a.Negative != bNeg {
			return decNaN()
		}
		return decInf(a.Negative)
	case a.Form == apd.Infinite:
		return decInf(a.Negative)
	default:
		return decInf(bNeg)
	}
}
