package types

import (
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// DArray is the value of a one-dimensional array: its elements in order, a
// nil element being SQL NULL. The element type is the column's (Type.Elem);
// every element is a Datum of that type. Like other reference datums an
// array is never mutated after creation: functions build a new one.
type DArray []Datum

// CompareArray orders arrays as Postgres's array_cmp does: element by
// element (a NULL element is equal to another NULL and greater than any
// value), then the shorter array first.
func CompareArray(x, y DArray) int {
	for i := range min(len(x), len(y)) {
		a, b := x[i], y[i]
		switch {
		case a == nil && b == nil:
			continue
		case a == nil:
			return 1
		case b == nil:
			return -1
		}
		if c := Compare(a, b); c != 0 {
			return c
		}
	}
	switch {
	case len(x) < len(y):
		return -1
	case len(x) > len(y):
		return 1
	}
	return 0
}

// checkArray reports whether every element of d is a valid elem value.
func checkArray(d Datum, elem Type) bool {
	a, ok := d.(DArray)
	if !ok {
		return false
	}
	for _, e := range a {
		if CheckDatum(e, elem) != nil {
			return false
		}
	}
	return true
}

// appendArray appends Postgres's text output of an array: {1,2,NULL}, with
// elements double-quoted when they would not read back as themselves.
func appendArray(dst []byte, a DArray, elem Type) []byte {
	dst = append(dst, '{')
	for i, e := range a {
		if i > 0 {
			dst = append(dst, ',')
		}
		if e == nil {
			dst = append(dst, "NULL"...)
			continue
		}
		start := len(dst)
		dst = FormatDatumAppend(dst, e, elem)
		if needsArrayQuote(dst[start:]) {
			dst = quoteArrayElem(dst, start)
		}
	}
	return append(dst, '}')
}

// needsArrayQuote mirrors Postgres's array_out: quote an element that is
// empty, reads as NULL, or holds a delimiter, brace, quote, backslash or
// white space.
func needsArrayQuote(s []byte) bool {
	if len(s) == 0 || strings.EqualFold(string(s), "NULL") {
		return true
	}
	for _, c := range s {
		switch c {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}

// quoteArrayElem rewrites dst[start:] in place as a double-quoted element
// with " and \ escaped by a backslash.
func quoteArrayElem(dst []byte, start int) []byte {
	raw := string(dst[start:])
	dst = append(dst[:start], '"')
	for i := 0; i < len(raw); i++ {
		if raw[i] == '"' || raw[i] == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, raw[i])
	}
	return append(dst, '"')
}

// parseArray reads Postgres's array input syntax for a one-dimensional
// array of elem: '{a, "b c", NULL}'. Unquoted elements are trimmed and the
// unquoted word NULL (any case) is a NULL element.
func parseArray(s string, elem Type) (Datum, error) {
	p := arrayParser{s: s}
	p.space()
	if !p.eat('{') {
		return nil, p.malformed("Array value must start with \"{\" or dimension information.")
	}
	out := DArray{}
	p.space()
	if p.eat('}') {
		return out, p.end()
	}
	for {
		text, isNull, err := p.element()
		if err != nil {
			return nil, err
		}
		var d Datum
		if !isNull {
			if d, err = ParseDatum(text, elem); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
		p.space()
		switch {
		case p.eat(','):
		case p.eat('}'):
			return out, p.end()
		default:
			return nil, p.malformed("Unexpected array element.")
		}
	}
}

type arrayParser struct {
	s string
	i int
}

func (p *arrayParser) space() {
	for p.i < len(p.s) && isSpace(p.s[p.i]) {
		p.i++
	}
}

// isSpace is C's isspace, which Postgres's input functions skip.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func (p *arrayParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *arrayParser) end() error {
	p.space()
	if p.i != len(p.s) {
		return p.malformed("Junk after closing right brace.")
	}
	return nil
}

func (p *arrayParser) malformed(detail string) error {
	e := sqlerr.Errorf(sqlerr.InvalidTextRepresentation, "malformed array literal: \"%s\"", p.s)
	e.Detail = detail
	return e
}

// element reads one element after leading white space: a quoted string, or
// an unquoted run up to ',' or '}' with trailing white space dropped.
func (p *arrayParser) element() (text string, isNull bool, err error) {
	p.space()
	if p.i >= len(p.s) {
		return "", false, p.malformed("Unexpected end of input.")
	}
	switch p.s[p.i] {
	case '"':
		p.i++
		return p.quoted()
	case '{':
		return "", false, sqlerr.Errorf(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported")
	case ',', '}':
		return "", false, p.malformed("Unexpected \"" + string(p.s[p.i]) + "\" character.")
	}
	var sb strings.Builder
	keep, escaped := 0, false // keep: length up to the last non-space or escaped byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ',' || c == '}':
			text = sb.String()[:keep]
			return text, !escaped && strings.EqualFold(text, "NULL"), nil
		case c == '"' || c == '{':
			return "", false, p.malformed("Unexpected array element.")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", false, p.malformed("Unexpected end of input.")
			}
			p.i++
			sb.WriteByte(p.s[p.i])
			keep, escaped = sb.Len(), true
		default:
			sb.WriteByte(c)
			if !isSpace(c) {
				keep = sb.Len()
			}
		}
		p.i++
	}
	return "", false, p.malformed("Unexpected end of input.")
}

func (p *arrayParser) quoted() (string, bool, error) {
	var sb strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			return sb.String(), false, nil
		case '\\':
			if p.i >= len(p.s) {
				break
			}
			c = p.s[p.i]
			p.i++
		}
		sb.WriteByte(c)
	}
	return "", false, p.malformed("Unexpected end of input.")
}
