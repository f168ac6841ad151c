package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Math functions. Overloads on double precision come first so that an
// integer argument picks them, as Postgres's preferred-type rule does
// (round(5) is double precision; round(5.5) — a numeric literal — is
// numeric).

const codeInvalidPowerArg = sqlerr.Code("2201F")

func registerMath(r registry) {
	dec := types.TDecimal
	f8 := func(name string, fn func(float64) float64) {
		r.add(name, sig(tF8), tF8, unary(func(_ *Context, x float64) (float64, error) { return fn(x), nil }))
	}
	d1 := func(name string, fn func(*apd.Decimal) (*apd.Decimal, error)) {
		r.add(name, sig(dec), dec, unary(func(_ *Context, x *apd.Decimal) (*apd.Decimal, error) { return fn(x) }))
	}
	f8("round", math.RoundToEven) // rint: half to even for floats
	d1("round", func(x *apd.Decimal) (*apd.Decimal, error) { return roundDecimal(x, 0) })
	r.add("round", sig(dec, types.TInt32), dec, binary(func(_ *Context, x *apd.Decimal, n int64) (*apd.Decimal, error) { return roundDecimal(x, n) }))
	for _, name := range []string{"ceil", "ceiling"} {
		f8(name, math.Ceil)
		d1(name, func(x *apd.Decimal) (*apd.Decimal, error) { return integral(x, apd.RoundCeiling) })
	}
	f8("floor", math.Floor)
	d1("floor", func(x *apd.Decimal) (*apd.Decimal, error) { return integral(x, apd.RoundFloor) })
	f8("trunc", math.Trunc)
	d1("trunc", func(x *apd.Decimal) (*apd.Decimal, error) { return integral(x, apd.RoundDown) })
	f8("sign", func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x
	})
	d1("sign", func(x *apd.Decimal) (*apd.Decimal, error) {
		if x.Form == apd.NaN {
			return x, nil
		}
		return apd.New(int64(x.Sign()), 0), nil
	})
	r.add("sqrt", sig(tF8), tF8, unary(func(_ *Context, x float64) (float64, error) {
		if x < 0 {
			return 0, sqlerr.New(codeInvalidPowerArg, "cannot take square root of a negative number")
		}
		return math.Sqrt(x), nil
	}))
	d1("sqrt", sqrtDecimal)
	for _, name := range []string{"power", "pow", "^"} {
		r.add(name, sig(tF8, tF8), tF8, binary(powFloat))
		r.add(name, sig(dec, dec), dec, binary(func(_ *Context, x, y *apd.Decimal) (*apd.Decimal, error) { return powDecimal(x, y) }))
	}
}

// roundDecimal rounds half away from zero to n decimal places (n may be
// negative: round(1234, -2) = 1200).
func roundDecimal(x *apd.Decimal, n int64) (*apd.Decimal, error) {
	if x.Form != apd.Finite {
		return x, nil
	}
	n = max(min(n, numericMaxScale), -numericMaxExponent)
	c := decExact
	c.Rounding = apd.RoundHalfUp
	c.Precision = uint32(max(msdPower(x)+max(n, 0)+3, 1))
	d := new(apd.Decimal)
	if _, err := c.Quantize(d, x, int32(-n)); err != nil {
		return nil, errNumericOverflow()
	}
	if n < 0 {
		// Show the rounded value as an integer (1200, not 1.2E+3).
		if _, err := c.Quantize(d, d, 0); err != nil {
			return nil, errNumericOverflow()
		}
	}
	return d, nil
}

func integral(x *apd.Decimal, mode apd.Rounder) (*apd.Decimal, error) {
	if x.Form != apd.Finite {
		return x, nil
	}
	c := decExact
	c.Rounding = mode
	c.Precision = uint32(max(msdPower(x)+2, 1))
	d := new(apd.Decimal)
	if _, err := c.Quantize(d, x, 0); err != nil {
		return nil, errNumericOverflow()
	}
	return d, nil
}

// sqrtDecimal follows Postgres's numeric_sqrt scale: about 16 significant
// digits, never fewer decimals than the argument shows.
func sqrtDecimal(x *apd.Decimal) (*apd.Decimal, error) {
	if x.Sign() < 0 {
		return nil, sqlerr.New(codeInvalidPowerArg, "cannot take square root of a negative number")
	}
	if x.Form != apd.Finite {
		return x, nil
	}
	w, _ := nbaseWeight(x)
	sweight := (w+1)*4/2 - 1
	scale := max(int64(numericMinSigDigit)-sweight, int64(dscale(x)), 0)
	return evalToScale(scale, func(c *apd.Context, d *apd.Decimal) (apd.Condition, error) { return c.Sqrt(d, x) })
}

// powDecimal approximates Postgres's numeric power: at least 16
// significant digits, exact for integer exponents of modest size.
func powDecimal(x, y *apd.Decimal) (*apd.Decimal, error) {
	if isZeroDec(x) && y.Sign() < 0 {
		return nil, sqlerr.New(codeInvalidPowerArg, "zero raised to a negative power is undefined")
	}
	var frac apd.Decimal
	if _, err := decExact.Quantize(&frac, y, 0); err != nil || frac.Cmp(y) != 0 {
		if x.Sign() < 0 {
			return nil, sqlerr.New(codeInvalidPowerArg, "a negative number raised to a non-integer power yields a complex result")
		}
	}
	scale := max(int64(numericMinSigDigit), int64(dscale(x)))
	return evalToScale(scale, func(c *apd.Context, d *apd.Decimal) (apd.Condition, error) { return c.Pow(d, x, y) })
}

// evalToScale computes op with ample precision and rounds the result to
// scale decimal places, half away from zero.
func evalToScale(scale int64, op func(*apd.Context, *apd.Decimal) (apd.Condition, error)) (*apd.Decimal, error) {
	c := decExact
	c.Precision = uint32(min(scale+40, 2000))
	d := new(apd.Decimal)
	if _, err := op(&c, d); err != nil {
		return nil, errNumericOverflow()
	}
	c.Rounding = apd.RoundHalfUp
	c.Precision = uint32(max(msdPower(d)+scale+2, 1))
	if _, err := c.Quantize(d, d, int32(-scale)); err != nil {
		return nil, errNumericOverflow()
	}
	return d, nil
}

func powFloat(_ *Context, x, y float64) (float64, error) {
	switch {
	case x == 0 && y < 0:
		return 0, sqlerr.New(codeInvalidPowerArg, "zero raised to a negative power is undefined")
	case x < 0 && y != math.Trunc(y):
		return 0, sqlerr.New(codeInvalidPowerArg, "a negative number raised to a non-integer power yields a complex result")
	}
	r := math.Pow(x, y)
	if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return 0, errFloatOverflow()
	}
	if r == 0 && x != 0 && !math.IsInf(y, 0) {
		return 0, errFloatUnderflow()
	}
	return r, nil
}
