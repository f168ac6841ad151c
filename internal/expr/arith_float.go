package expr

import (
	"math"

	"github.com/sluice-db/sluice/internal/types"
)

// floatArith returns the row function for + - * / on real or double
// precision. Like Postgres it reports overflow (a finite input giving an
// infinite result), underflow (non-zero inputs giving zero) and division by
// zero as errors instead of producing Inf or NaN. real results are rounded
// through float32 and checked at that width.
func floatArith(op byte, t types.Type) func(*Context, float64, float64) (float64, error) {
	real := t.ID == types.Float32
	return func(_ *Context, a, b float64) (float64, error) {
		var r float64
		switch op {
		case '+':
			r = a + b
		case '-':
			r = a - b
		case '*':
			r = a * b
		case '/':
			if b == 0 && !math.IsNaN(a) { // NaN / 0 is NaN, as in Postgres
				return 0, errDivByZero()
			}
			r = a / b
		}
		if real {
			r = float64(float32(r))
		}
		return checkFloat(op, a, b, r)
	}
}

func checkFloat(op byte, a, b, r float64) (float64, error) {
	if math.IsInf(r, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
		return 0, errFloatOverflow()
	}
	if r == 0 {
		switch {
		case op == '*' && a != 0 && b != 0:
			return 0, errFloatUnderflow()
		case op == '/' && a != 0 && !math.IsInf(b, 0):
			return 0, errFloatUnderflow()
		}
	}
	return r, nil
}

func negFloat(_ *Context, x float64) (float64, error) { return -x, nil }

func absFloat(_ *Context, x float64) (float64, error) { return math.Abs(x), nil }
