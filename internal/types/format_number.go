package types

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// trimSpace removes the C-locale whitespace (isspace) that Postgres's
// number and boolean input functions skip on both sides.
func trimSpace(s string) string {
	// A loop, not strings.Trim(s, cutset): Trim builds its ASCII set on
	// every call, a tenth of a COPY's number parsing.
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// parseBool accepts what Postgres's boolin does: t/true/yes/on/1 and
// f/false/no/off/0, case-insensitively, and any unique prefix of the words
// ("tr", "of"; a lone "o" is ambiguous).
func parseBool(s string) (Datum, error) {
	v := strings.ToLower(trimSpace(s))
	if v != "" {
		switch {
		case v == "1":
			return true, nil
		case v == "0":
			return false, nil
		case strings.HasPrefix("true", v), strings.HasPrefix("yes", v),
			len(v) >= 2 && strings.HasPrefix("on", v):
			return true, nil
		case strings.HasPrefix("false", v), strings.HasPrefix("no", v),
			len(v) >= 2 && strings.HasPrefix("off", v):
			return false, nil
		}
	}
	return nil, errSyntax("boolean", s)
}

// parseInt reads an optionally signed decimal integer and checks it
// against the type's range.
func parseInt(s string, t Type) (Datum, error) {
	n, err := parseInt64(s, t)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// int64Cutoff is the largest n whose n·10 is at most 2^63.
const int64Cutoff = (1 << 63) / 10

// parseInt64 is parseInt without boxing the result. One pass over the
// digits: checking them with strings.TrimLeft and allDigits and then
// parsing them again with strconv.ParseInt was a fifth of a COPY's
// integer columns (TrimLeft builds its cutset's table on every call).
func parseInt64(s string, t Type) (int64, error) {
	v := trimSpace(s)
	body, neg := v, false
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		body, neg = body[1:], body[0] == '-'
	}
	if body == "" {
		return 0, errSyntax(t.String(), s)
	}
	var n uint64
	overflow := false
	for i := 0; i < len(body); i++ {
		d := body[i] - '0'
		if d > 9 {
			return 0, errSyntax(t.String(), s)
		}
		if n > int64Cutoff {
			// n·10 passes 2^63, out of every integer type's range (and
			// n·10+d stays in a uint64 below it: no division per digit).
			overflow = true // keep going: a later non-digit is a syntax error
			continue
		}
		n = n*10 + uint64(d)
	}
	lo, hi := t.IntRange()
	switch {
	case overflow:
	case neg && n <= uint64(-(lo+1))+1:
		return -int64(n-1) - 1, nil
	case !neg && n <= uint64(hi):
		return int64(n), nil
	}
	return 0, errRange(t.String(), s)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseFloat reads a real or double precision value the way float4in and
// float8in do: decimal or exponent notation, or NaN / Infinity / inf in
// any case. A value too large or too small to be anything but infinity or
// zero is out of range, as in Postgres; subnormal results are kept.
func parseFloat(s string, real bool) (Datum, error) {
	name, bits := "double precision", 64
	if real {
		name, bits = "real", 32
	}
	v := trimSpace(s)
	switch strings.ToLower(strings.TrimPrefix(v, "+")) {
	case "nan":
		return math.NaN(), nil
	case "inf", "infinity":
		return math.Inf(1), nil
	case "-inf", "-infinity":
		return math.Inf(-1), nil
	}
	nonZero, ok := scanDecimalSyntax(v)
	if !ok {
		return nil, errSyntax(name, s)
	}
	f, err := strconv.ParseFloat(v, bits)
	if err != nil || (f == 0 && nonZero) {
		return nil, sqlerr.Errorf(sqlerr.NumericValueOutOfRange,
			"\"%s\" is out of range for type %s", v, name)
	}
	return f, nil
}

// scanDecimalSyntax checks s against [+-]digits[.digits][e[+-]digits]
// (digits may be empty on one side of the point, not both) and reports
// whether any mantissa digit is non-zero.
func scanDecimalSyntax(s string) (nonZero, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && (isDigit(s[i]) || s[i] == '.'); i++ {
		if s[i] == '.' {
			if strings.IndexByte(s[:i], '.') >= 0 {
				return false, false
			}
			continue
		}
		digits++
		nonZero = nonZero || s[i] != '0'
	}
	if digits == 0 {
		return false, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || !allDigits(s[i:]) {
			return false, false
		}
		i = len(s)
	}
	return nonZero, i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// appendFloat writes the shortest text that reads back as the same value,
// laid out as Postgres's Ryu-based output does: plain digits while the
// decimal exponent is in [-4, 15) for double ([-4, 6) for real), otherwise
// d.ddde±XX with at least two exponent digits.
func appendFloat(dst []byte, x float64, real bool) []byte {
	switch {
	case math.IsNaN(x):
		return append(dst, "NaN"...)
	case math.IsInf(x, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(x, -1):
		return append(dst, "-Infinity"...)
	}
	bits, maxExp := 64, 15
	if real {
		bits, maxExp = 32, 6
	}
	var scratch [32]byte
	e := strconv.AppendFloat(scratch[:0], x, 'e', -1, bits)
	exp := floatExponent(e)
	if x == 0 || (exp >= -4 && exp < maxExp) {
		return strconv.AppendFloat(dst, x, 'f', -1, bits)
	}
	return append(dst, e...) // Go also writes at least two exponent digits
}

// floatExponent reads the exponent of a number Go wrote in 'e' format.
func floatExponent(e []byte) int {
	i := bytes.IndexByte(e, 'e')
	exp := 0
	for _, c := range e[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[i+1] == '-' {
		return -exp
	}
	return exp
}
