package pgwire

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Postgres's binary numeric (numeric_send) is a header of four int16s —
// ndigits, weight, sign, dscale — then ndigits base-10000 digits, most
// significant first. The value is sum(digit[i] * 10000^(weight-i)); dscale
// is the number of decimal digits after the point that the value displays.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

// appendNumeric appends d in numeric_send's format.
func appendNumeric(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return appendNumericHeader(dst, 0, 0, numericNaN, 0)
	case apd.Infinite:
		if d.Negative {
			return appendNumericHeader(dst, 0, 0, numericNInf, 0)
		}
		return appendNumericHeader(dst, 0, 0, numericPInf, 0)
	}
	dscale := max(0, -int(d.Exponent))
	digits, weight := numericGroups(d.Coeff.String(), int(d.Exponent))
	sign := uint16(numericPos)
	if d.Negative && len(digits) > 0 {
		sign = numericNeg
	}
	dst = appendNumericHeader(dst, len(digits), weight, sign, dscale)
	for _, g := range digits {
		dst = binary.BigEndian.AppendUint16(dst, g)
	}
	return dst
}

func appendNumericHeader(dst []byte, ndigits, weight int, sign uint16, dscale int) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(ndigits))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	return binary.BigEndian.AppendUint16(dst, uint16(dscale))
}

// numericGroups turns coefficient digits × 10^exp into base-10000 groups
// aligned on the decimal point, without leading or trailing zero groups,
// and the weight of the first group.
func numericGroups(coeff string, exp int) ([]uint16, int) {
	if strings.Trim(coeff, "0") == "" {
		return nil, 0
	}
	frac := 0
	if exp > 0 {
		coeff += strings.Repeat("0", exp)
	} else {
		frac = -exp
	}
	intLen := len(coeff) - frac
	if intLen < 0 {
		coeff = strings.Repeat("0", -intLen) + coeff
		intLen = 0
	}
	padL := (4 - intLen%4) % 4
	padR := (4 - frac%4) % 4
	s := strings.Repeat("0", padL) + coeff + strings.Repeat("0", padR)
	weight := (intLen+padL)/4 - 1
	groups := make([]uint16, 0, len(s)/4)
	for i := 0; i < len(s); i += 4 {
		g, _ := strconv.Atoi(s[i : i+4])
		groups = append(groups, uint16(g))
	}
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	return groups, weight
}

// decodeNumeric parses numeric_send's format by writing the value as a
// plain decimal string with dscale fraction digits and reading it with
// numeric's text input, so both paths produce the same Datum.
func decodeNumeric(b []byte) (types.Datum, error) {
	if len(b) < 8 {
		return nil, errBinary(types.TDecimal, b)
	}
	ndigits := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	if len(b) != 8+2*ndigits || dscale > 0x3FFF {
		return nil, errBinary(types.TDecimal, b)
	}
	switch sign {
	case numericNaN:
		return types.ParseDatum("NaN", types.TDecimal)
	case numericPInf:
		return types.ParseDatum("Infinity", types.TDecimal)
	case numericNInf:
		return types.ParseDatum("-Infinity", types.TDecimal)
	case numericPos, numericNeg:
	default:
		return nil, sqlerr.New(sqlerr.InvalidBinaryRepresentation, "invalid sign in external \"numeric\" value")
	}
	if weight > types.DecimalMaxIntDigits/4+1 || weight < -(0x3FFF/4+2) {
		return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	var digits strings.Builder
	for i := 0; i < ndigits; i++ {
		g := binary.BigEndian.Uint16(b[8+2*i:])
		if g >= 10000 {
			return nil, sqlerr.New(sqlerr.InvalidBinaryRepresentation, "invalid digit in external \"numeric\" value")
		}
		digits.WriteString(strconv.Itoa(int(g) + 10000)[1:])
	}
	return types.ParseDatum(numericText(digits.String(), weight, sign == numericNeg, dscale), types.TDecimal)
}

// numericText places the decimal point in the concatenated 4-digit groups
// (the integer part is the first (weight+1)*4 digits) and cuts or pads the
// fraction to dscale digits.
func numericText(s string, weight int, neg bool, dscale int) string {
	point := (weight + 1) * 4
	switch {
	case point < 0:
		s = strings.Repeat("0", -point) + s
		point = 0
	case point > len(s):
		s += strings.Repeat("0", point-len(s))
	}
	intPart, frac := s[:point], s[point:]
	if len(frac) > dscale {
		frac = frac[:dscale]
	} else {
		frac += strings.Repeat("0", dscale-len(frac))
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	out := intPart
	if dscale > 0 {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}
