package types

import (
	"fmt"
	"strings"
)

// The text form of a chunk, for tests: one row per line, the op's sign
// ("+", "-", "U-", "U+") then the values in Postgres text format separated by
// spaces. NULL is written NULL; a value that is empty, has spaces or quotes,
// or reads as NULL is single-quoted with ” for a quote. A row that ends with
// the extra token "D" is present but invisible.
//
//	+ 1 4
//	U- 5 3
//	U+ 5 'a b'

// ParseChunk parses the text form into a chunk with columns of types ts.
// Blank lines and lines starting with # are skipped.
func ParseChunk(ts []Type, text string) (*Chunk, error) {
	cols := make([]Column, len(ts))
	for i, t := range ts {
		c, err := NewColumn(t, 8)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	var ops []Op
	var vis Bitmap
	hidden := false
	for lineNo, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		toks, err := splitTokens(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo+1, err)
		}
		op, err := parseOp(toks[0].text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo+1, err)
		}
		vals := toks[1:]
		visible := true
		if len(vals) == len(ts)+1 && vals[len(vals)-1].text == "D" && !vals[len(vals)-1].quoted {
			visible, vals = false, vals[:len(vals)-1]
			hidden = true
		}
		if len(vals) != len(ts) {
			return nil, fmt.Errorf("line %d: %d values for %d columns", lineNo+1, len(vals), len(ts))
		}
		for i, tok := range vals {
			if err := appendToken(cols[i], tok); err != nil {
				return nil, fmt.Errorf("line %d column %d: %w", lineNo+1, i+1, err)
			}
		}
		if visible {
			vis.Set(len(ops))
		}
		ops = append(ops, op)
	}
	c := NewChunk(cols, ops)
	if hidden {
		c.SetVisibility(vis)
	}
	return c, nil
}

// MustParseChunk is ParseChunk for test literals.
func MustParseChunk(ts []Type, text string) *Chunk {
	c, err := ParseChunk(ts, text)
	if err != nil {
		panic(err)
	}
	return c
}

type token struct {
	text   string
	quoted bool
}

func splitTokens(line string) ([]token, error) {
	var toks []token
	for i := 0; i < len(line); {
		switch {
		case line[i] == ' ' || line[i] == '\t':
			i++
		case line[i] == '\'':
			var sb strings.Builder
			j := i + 1
			for ; j < len(line); j++ {
				if line[j] == '\'' {
					if j+1 < len(line) && line[j+1] == '\'' {
						sb.WriteByte('\'')
						j++
						continue
					}
					break
				}
				sb.WriteByte(line[j])
			}
			if j >= len(line) {
				return nil, fmt.Errorf("unterminated quote")
			}
			toks = append(toks, token{text: sb.String(), quoted: true})
			i = j + 1
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j++
			}
			toks = append(toks, token{text: line[i:j]})
			i = j
		}
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty row")
	}
	return toks, nil
}

func parseOp(s string) (Op, error) {
	switch s {
	case "+":
		return Insert, nil
	case "-":
		return Delete, nil
	case "U-":
		return UpdateDelete, nil
	case "U+":
		return UpdateInsert, nil
	}
	return 0, fmt.Errorf("unknown op %q (want +, -, U- or U+)", s)
}

func appendToken(col Column, tok token) error {
	if !tok.quoted && tok.text == "NULL" {
		col.Append(nil)
		return nil
	}
	d, err := ParseDatum(tok.text, col.Type())
	if err != nil {
		return err
	}
	col.Append(d)
	return nil
}

// String renders the visible rows in text form.
func (c *Chunk) String() string { return c.format(false) }

// StringAll renders every row, marking invisible ones with a trailing D.
func (c *Chunk) StringAll() string { return c.format(true) }

func (c *Chunk) format(all bool) string {
	var sb strings.Builder
	for i, n := 0, c.Capacity(); i < n; i++ {
		vis := c.Visible(i)
		if !vis && !all {
			continue
		}
		sb.WriteString(c.Op(i).String())
		for _, col := range c.Cols {
			sb.WriteByte(' ')
			sb.WriteString(FormatToken(col.Get(i), col.Type()))
		}
		if !vis {
			sb.WriteString(" D")
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// FormatRow renders a row's values in text form, space separated.
func FormatRow(r Row, ts []Type) string {
	parts := make([]string, len(r))
	for i, d := range r {
		parts[i] = FormatToken(d, ts[i])
	}
	return strings.Join(parts, " ")
}

// FormatToken renders one value as a text-form token, quoting it when it
// would not read back as itself.
func FormatToken(d Datum, t Type) string {
	if d == nil {
		return "NULL"
	}
	s := FormatDatum(d, t)
	if s == "" || s == "NULL" || s == "D" || strings.ContainsAny(s, " \t'\n") {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}
