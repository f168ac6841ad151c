package expr

import (
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/pgkeywords"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// format(formatstr, args…), quote_ident, quote_literal and
// quote_nullable, as Postgres has them: %s inserts an argument's text
// (NULL as nothing), %I quotes it as an identifier, %L as a literal (NULL
// as NULL), %% is a percent sign; a conversion may name its argument
// (%2$s) and give a width (%10s, %-10s, %*s).

func registerFormat(r registry) {
	tv := types.TVarchar
	r.addVariadic("format", sig(tv, anyType), tv, buildFormat)
	r.add("format", sig(tv), tv, buildFormat)
	r.add("quote_ident", sig(tv), tv, unary(func(_ *Context, s string) (string, error) { return pgkeywords.QuoteIdent(s), nil }))
	r.add("quote_literal", sig(tv), tv, unary(func(_ *Context, s string) (string, error) { return quoteLiteral(s), nil }))
	r.add("quote_literal", sig(anyType), tv, func(args []Expr, ret types.Type) (Expr, error) {
		t := args[0].Type()
		return &naryExpr{args: args, typ: ret, strict: true, fn: func(_ *Context, a []types.Datum) (types.Datum, error) {
			return quoteLiteral(types.FormatDatum(a[0], t)), nil
		}}, nil
	})
	r.add("quote_nullable", sig(tv), tv, nary(false, func(_ *Context, a []types.Datum) (types.Datum, error) {
		if a[0] == nil {
			return "NULL", nil
		}
		return quoteLiteral(a[0].(string)), nil
	}))
}

// buildFormat makes format's Expr, which renders each argument in its
// own type's text form.
func buildFormat(args []Expr, ret types.Type) (Expr, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return &naryExpr{args: args, typ: ret, fn: func(_ *Context, a []types.Datum) (types.Datum, error) {
		if a[0] == nil {
			return nil, nil
		}
		return formatString(a[0].(string), a[1:], ts[1:])
	}}, nil
}

// quoteLiteral quotes s as a string literal, as E'…' when it holds a
// backslash.
func quoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// formatter walks one format string.
type formatter struct {
	f    string
	i    int
	args []types.Datum
	ts   []types.Type
	next int // the argument an unnumbered conversion takes
}

func formatString(f string, args []types.Datum, ts []types.Type) (types.Datum, error) {
	p := &formatter{f: f, args: args, ts: ts}
	var sb strings.Builder
	for p.i < len(f) {
		c := f[p.i]
		p.i++
		if c != '%' {
			sb.WriteByte(c)
			continue
		}
		if p.i < len(f) && f[p.i] == '%' {
			sb.WriteByte('%')
			p.i++
			continue
		}
		s, err := p.conversion()
		if err != nil {
			return nil, err
		}
		sb.WriteString(s)
	}
	return sb.String(), nil
}

// conversion reads one conversion after its '%' and renders it.
func (p *formatter) conversion() (string, error) {
	if n, ok := p.position(); ok {
		if n < 0 {
			return "", errFormat("format specifies argument 0, but arguments are numbered from 1")
		}
		p.next = n
	}
	left := p.eat('-')
	width, err := p.width()
	if err != nil {
		return "", err
	}
	if p.i >= len(p.f) {
		return "", errFormat("unterminated format() type specifier")
	}
	kind := p.f[p.i]
	p.i++
	if p.next >= len(p.args) {
		return "", errFormat("too few arguments for format()")
	}
	d, t := p.args[p.next], p.ts[p.next]
	p.next++
	s, err := renderArg(kind, d, t)
	if err != nil {
		return "", err
	}
	if width < 0 {
		left, width = true, -width
	}
	if pad := width - len([]rune(s)); pad > 0 {
		if left {
			return s + strings.Repeat(" ", pad), nil
		}
		return strings.Repeat(" ", pad) + s, nil
	}
	return s, nil
}

// position reads an argument position n$ (1-based), if there is one.
func (p *formatter) position() (int, bool) {
	j := p.i
	for j < len(p.f) && p.f[j] >= '0' && p.f[j] <= '9' {
		j++
	}
	if j == p.i || j >= len(p.f) || p.f[j] != '$' {
		return 0, false
	}
	n, _ := strconv.Atoi(p.f[p.i:j])
	p.i = j + 1
	return n - 1, true
}

func (p *formatter) eat(c byte) bool {
	if p.i < len(p.f) && p.f[p.i] == c {
		p.i++
		return true
	}
	return false
}

// width reads a width: digits, or * taking it from an argument.
func (p *formatter) width() (int, error) {
	if p.eat('*') {
		if n, ok := p.position(); ok {
			if n < 0 {
				return 0, errFormat("format specifies argument 0, but arguments are numbered from 1")
			}
			p.next = n
		}
		if p.next >= len(p.args) {
			return 0, errFormat("too few arguments for format()")
		}
		w, ok := p.args[p.next].(int64)
		p.next++
		if !ok && p.args[p.next-1] != nil {
			return 0, errFormat("width argument must be an integer")
		}
		return int(w), nil
	}
	j := p.i
	for j < len(p.f) && p.f[j] >= '0' && p.f[j] <= '9' {
		j++
	}
	w, _ := strconv.Atoi(p.f[p.i:j])
	p.i = j
	return w, nil
}

// renderArg renders one argument by conversion kind.
func renderArg(kind byte, d types.Datum, t types.Type) (string, error) {
	text := ""
	if d != nil {
		text = types.FormatDatum(d, t)
	}
	switch kind {
	case 's':
		return text, nil
	case 'I':
		if d == nil {
			return "", sqlerr.New(sqlerr.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
		}
		return pgkeywords.QuoteIdent(text), nil
	case 'L':
		if d == nil {
			return "NULL", nil
		}
		return quoteLiteral(text), nil
	}
	return "", errFormat("unrecognized format() type specifier \"%c\"", kind)
}

func errFormat(format string, args ...any) error {
	return sqlerr.Errorf(sqlerr.InvalidParameterValue, format, args...)
}
