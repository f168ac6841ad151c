package parser

import "strings"

// Option is one WITH option of a CREATE TABLE or CREATE SOURCE, as
// written: Name is the dotted name lower-cased (nexmark.table.type),
// Value the value unquoted, Offset its byte offset in Statement.Input.
type Option struct {
	Name   string
	Value  string
	Offset int
}

// sourceClauses handles what RisingWave's CREATE SOURCE and CREATE TABLE
// add to Postgres's CREATE TABLE, so pg_query parses the rest: the word
// SOURCE (rewritten in text to TABLE, the same length, and recorded in
// st.Source), the WITH (…) options after the column list (whose names
// may have several dots, which Postgres's grammar refuses: recorded in
// st.With and blanked), and FORMAT … ENCODE … (recorded and blanked).
func sourceClauses(st *Statement, w []word, text []byte) error {
	i := 0
	switch {
	case is(w, 0, "create", "source"):
		st.Source = true
		copy(text[w[1].start:w[1].end], "table ")
		i = 2
	case is(w, 0, "create", "table"):
		i = 2
	default:
		return nil
	}
	end, ok := closingParen(w, i)
	if !ok {
		return nil // no column list: pg_query reports what is wrong
	}
	open := i
	for w[open].raw != "(" {
		open++
	}
	if err := watermarkClause(st, w, open, end, text); err != nil {
		return err
	}
	k := end + 1
	if is(w, k, "append", "only") {
		k += 2
	}
	if is(w, k, "with") && k+1 < len(w) && w[k+1].raw == "(" {
		p := &customParser{st: st, w: w, i: k + 2}
		st.With = p.options()
		if p.err != nil {
			return p.err
		}
		blank(text, w[k].start, w[p.i-1].end)
		st.HasWith = true
		k = p.i
	}
	if is(w, k, "format") {
		p := &customParser{st: st, w: w, i: k + 1}
		p.format()
		if p.err != nil {
			return p.err
		}
		blank(text, w[k].start, w[p.i-1].end)
	}
	return nil
}

// closingParen returns the index of the parenthesis closing the first
// one at or after word i.
func closingParen(w []word, i int) (int, bool) {
	depth := 0
	for ; i < len(w); i++ {
		switch w[i].raw {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i, true
			}
		}
		if depth == 0 && is(w, i, "as") {
			return 0, false // CREATE TABLE … AS
		}
	}
	return 0, false
}

// options reads `name = value, …)`; the opening parenthesis is read.
func (p *customParser) options() []Option {
	var out []Option
	for p.err == nil {
		if p.i < len(p.w) && p.w[p.i].raw == ")" && len(out) == 0 {
			p.i++
			return out
		}
		o := Option{}
		if p.i < len(p.w) {
			o.Offset = p.w[p.i].start
		}
		o.Name = p.dottedName()
		if p.i < len(p.w) && p.w[p.i].raw == "=" {
			p.i++
			o.Value = p.optionValue()
		}
		out = append(out, o)
		switch {
		case p.i < len(p.w) && p.w[p.i].raw == ",":
			p.i++
		case p.i < len(p.w) && p.w[p.i].raw == ")":
			p.i++
			return out
		default:
			p.fail()
		}
	}
	return out
}

// dottedName reads word(.word)*, lower-cased unless quoted.
func (p *customParser) dottedName() string {
	var parts []string
	for {
		if p.i >= len(p.w) || p.w[p.i].raw == "=" || p.w[p.i].raw == "," || p.w[p.i].raw == ")" ||
			p.w[p.i].raw == "(" || p.w[p.i].raw == "." {
			p.fail()
			return ""
		}
		parts = append(parts, p.w[p.i].text)
		p.i++
		if p.i < len(p.w) && p.w[p.i].raw == "." {
			p.i++
			continue
		}
		return strings.Join(parts, ".")
	}
}

// optionValue reads a string literal, a number (maybe signed) or a word.
func (p *customParser) optionValue() string {
	if p.i >= len(p.w) {
		p.fail()
		return ""
	}
	sign := ""
	if r := p.w[p.i].raw; r == "-" || r == "+" {
		sign = r
		p.i++
		if p.i >= len(p.w) {
			p.fail()
			return ""
		}
	}
	raw := p.w[p.i].raw
	if raw == "," || raw == ")" || raw == "(" || raw == "=" {
		p.fail()
		return ""
	}
	p.i++
	if strings.HasPrefix(raw, "'") && strings.HasSuffix(raw, "'") && len(raw) >= 2 {
		return sign + strings.ReplaceAll(raw[1:len(raw)-1], "''", "'")
	}
	if p.w[p.i-1].quoted {
		return sign + p.w[p.i-1].text
	}
	return sign + raw
}

// format reads `PLAIN ENCODE JSON [( options )]` after FORMAT.
func (p *customParser) format() {
	if p.i+2 >= len(p.w) || !isIdent(p.w[p.i]) || !is(p.w, p.i+1, "encode") || !isIdent(p.w[p.i+2]) {
		p.i = min(p.i+1, len(p.w))
		p.fail()
		return
	}
	p.st.Format, p.st.Encode = strings.ToUpper(p.w[p.i].text), strings.ToUpper(p.w[p.i+2].text)
	p.i += 3
	if p.i < len(p.w) && p.w[p.i].raw == "(" {
		p.i++
		p.st.EncodeOptions = p.options()
	}
}
