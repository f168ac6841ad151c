package parser

// WatermarkDef is a CREATE SOURCE's or CREATE TABLE's `WATERMARK FOR col
// AS expr`, as written: Expr is the expression's text, at byte Offset of
// Statement.Input.
type WatermarkDef struct {
	Column string
	Expr   string
	Offset int
}

// watermarkClause finds `WATERMARK FOR col AS expr` among the elements of
// the column list w[open:end] (end is the closing parenthesis), records
// it in st.Watermark and blanks it with its comma, so pg_query parses the
// other elements. A second one is a syntax error at its first word.
func watermarkClause(st *Statement, w []word, open, end int, text []byte) error {
	depth := 0
	for k := open; k < end; k++ {
		switch w[k].raw {
		case "(":
			depth++
			continue
		case ")":
			depth--
			continue
		}
		if depth != 1 || !is(w, k, "watermark", "for") || (w[k-1].raw != "," && w[k-1].raw != "(") {
			continue
		}
		stop := elementEnd(w, k, end)
		if st.Watermark != nil || k+4 >= stop || !is(w, k+3, "as") || !isIdent(w[k+2]) {
			p := &customParser{st: st, w: w, i: k}
			if st.Watermark == nil {
				p.i = min(k+3, stop)
				if k+2 < stop && !isIdent(w[k+2]) {
					p.i = k + 2
				}
			}
			p.fail()
			return p.err
		}
		st.Watermark = &WatermarkDef{Column: w[k+2].text, Expr: st.Input[w[k+4].start:w[stop-1].end], Offset: w[k+4].start}
		from, to := w[k].start, w[stop-1].end
		switch {
		case w[k-1].raw == ",":
			from = w[k-1].start
		case w[stop].raw == ",":
			to = w[stop].end
		}
		blank(text, from, to)
	}
	return nil
}

// elementEnd returns the index of the comma or parenthesis at depth 1
// ending the column-list element starting at word k.
func elementEnd(w []word, k, end int) int {
	depth := 0
	for ; k < end; k++ {
		switch w[k].raw {
		case "(":
			depth++
		case ")":
			depth--
		case ",":
			if depth == 0 {
				return k
			}
		}
	}
	return end
}
