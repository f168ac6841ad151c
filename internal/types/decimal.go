package types

import (
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Limits of Postgres's numeric type, which Sluice's numeric follows.
const (
	// DecimalMaxIntDigits is the most digits numeric keeps before the point.
	DecimalMaxIntDigits = 131072
	// DecimalMaxScale is the most digits numeric keeps after the point.
	DecimalMaxScale = 16383
	// DecimalPrecision is the number of significant digits arithmetic in
	// DecimalContext keeps. Postgres numeric is exact up to its limits;
	// apd needs a finite precision for every operation, and the cost of
	// division and transcendental functions grows with it. 1000 digits is
	// far beyond what any real column holds (and matches Postgres's
	// NUMERIC_MAX_PRECISION, the largest declarable numeric(p)), while a
	// division that does not terminate stays cheap. Expression code that
	// wants Postgres's result scale for division rounds the quotient itself.
	DecimalPrecision = 1000
	// decimalMaxInputExponent bounds the exponent written in a numeric
	// literal ("1e1000"), as Postgres 15 does (NUMERIC_MAX_PRECISION).
	decimalMaxInputExponent = 1000
)

// DecimalContext returns a fresh apd context for SQL numeric arithmetic:
// DecimalPrecision significant digits, exponents bounded by Postgres's
// numeric limits, half-up rounding (Postgres rounds numeric half away from
// zero), and traps on overflow, underflow, division by zero and invalid
// operations so those surface as errors instead of silent NaN. Inexact
// results are rounded, not errors. A caller that evaluates many rows keeps
// one context rather than calling this per row.
func DecimalContext() *apd.Context {
	return &apd.Context{
		Precision:   DecimalPrecision,
		MaxExponent: DecimalMaxIntDigits,
		MinExponent: -DecimalMaxScale - DecimalPrecision,
		Traps:       apd.Overflow | apd.Underflow | apd.DivisionByZero | apd.DivisionUndefined | apd.DivisionImpossible | apd.InvalidOperation | apd.SystemOverflow | apd.SystemUnderflow,
		Rounding:    apd.RoundHalfUp,
	}
}

// DecimalFromString parses a numeric literal as Postgres's numeric_in
// does: optional sign, digits with an optional point, an optional
// exponent, or NaN / Infinity / inf in any case, with surrounding
// whitespace. The result never has a positive exponent (1E+3 is stored as
// 1000, scale 0) and is never negative zero, so formatting it gives what
// Postgres prints.
func DecimalFromString(s string) (*apd.Decimal, error) {
	v := trimSpace(s)
	switch strings.ToLower(v) {
	case "nan":
		return &apd.Decimal{Form: apd.NaN}, nil
	case "infinity", "+infinity", "inf", "+inf":
		return &apd.Decimal{Form: apd.Infinite}, nil
	case "-infinity", "-inf":
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, nil
	}
	if _, ok := scanDecimalSyntax(v); !ok {
		return nil, errSyntax("numeric", s)
	}
	if !decimalExponentOK(v) {
		return nil, errSyntax("numeric", s)
	}
	d, _, err := apd.NewFromString(v)
	if err != nil {
		return nil, errSyntax("numeric", s)
	}
	return normalizeDecimal(d)
}

// decimalExponentOK rejects literal exponents beyond Postgres's bound
// before apd builds a coefficient with that many digits.
func decimalExponentOK(v string) bool {
	i := strings.IndexAny(v, "eE")
	if i < 0 {
		return true
	}
	exp := strings.TrimLeft(v[i+1:], "+-0")
	return len(exp) <= 4 && atoiDigits(exp) <= decimalMaxInputExponent
}

// atoiDigits converts a short run of ASCII digits (already validated).
func atoiDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// normalizeDecimal brings a finite decimal to Postgres's shape: exponent
// at most zero, no negative zero, within numeric's digit limits.
func normalizeDecimal(d *apd.Decimal) (*apd.Decimal, error) {
	if d.Exponent > 0 {
		var scale apd.BigInt
		scale.Exp(apd.NewBigInt(10), apd.NewBigInt(int64(d.Exponent)), nil)
		d.Coeff.Mul(&d.Coeff, &scale)
		d.Exponent = 0
	}
	if d.Coeff.Sign() == 0 {
		d.Negative = false
	}
	intDigits := int64(d.NumDigits()) + int64(d.Exponent)
	if -d.Exponent > DecimalMaxScale || intDigits > DecimalMaxIntDigits {
		return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	return d, nil
}

func parseDecimal(s string) (Datum, error) {
	d, err := DecimalFromString(s)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// appendDecimal writes a numeric in plain notation, keeping its scale
// (1.50 stays 1.50), as Postgres's numeric_out does.
func appendDecimal(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, "NaN"...)
	case apd.Infinite:
		if d.Negative {
			return append(dst, "-Infinity"...)
		}
		return append(dst, "Infinity"...)
	}
	if d.Negative && d.Coeff.Sign() == 0 {
		// Arithmetic can produce -0; Postgres numeric has no negative zero.
		var z apd.Decimal
		z.Set(d)
		z.Negative = false
		return z.Append(dst, 'f')
	}
	return d.Append(dst, 'f')
}
