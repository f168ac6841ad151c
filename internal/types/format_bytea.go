package types

import (
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

const hexDigits = "0123456789abcdef"

// appendBytea writes bytea in Postgres's default hex output format.
func appendBytea(dst []byte, b []byte) []byte {
	dst = append(dst, '\\', 'x')
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// parseBytea accepts the hex format (\x then pairs of hex digits,
// whitespace allowed between pairs) and the escape format (plain bytes,
// \\ for a backslash, \ooo for an octal byte), as byteain does.
func parseBytea(s string) (Datum, error) {
	if strings.HasPrefix(s, `\x`) {
		return parseByteaHex(s[2:])
	}
	return parseByteaEscape(s)
}

func parseByteaHex(s string) (Datum, error) {
	out := make([]byte, 0, len(s)/2)
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		hi, ok := hexValue(c)
		if !ok {
			return nil, errHexDigit(s[i:])
		}
		if i+1 >= len(s) {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
		}
		lo, ok := hexValue(s[i+1])
		if !ok {
			return nil, errHexDigit(s[i+1:])
		}
		out = append(out, hi<<4|lo)
		i += 2
	}
	return out, nil
}

// errHexDigit names the offending character, as Postgres does.
func errHexDigit(rest string) error {
	r := []rune(rest)[0]
	return sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid hexadecimal digit: \"%c\"", r)
}

func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func parseByteaEscape(s string) (Datum, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			out = append(out, s[i])
			i++
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i += 2
		case i+3 < len(s) && isOctal(s[i+1]) && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]):
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
		default:
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
		}
	}
	return out, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
