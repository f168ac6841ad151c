package parser

import "github.com/sluice-db/sluice/internal/sqlerr"

// CREATE SINK is RisingWave's:
//
//	CREATE SINK [IF NOT EXISTS] name FROM relation WITH (…) [FORMAT … ENCODE …]
//	CREATE SINK [IF NOT EXISTS] name AS query WITH (…) [FORMAT … ENCODE …]
//
// The FROM form is read here alone. Of the AS form everything but the
// query is read here and blanked, so pg_query parses the query where it
// stands and the planner's positions point into the statement as typed.
// DROP SINK is parsed as DROP VIEW (the words have the same length) and
// marked st.Sink.

// createSink handles a CREATE SINK statement: handled reports that w is
// one, std that pg_query is to parse its query.
func createSink(st *Statement, w []word, text []byte) (handled, std bool, err error) {
	at := 0 // the word CREATE
	if is(w, 0, "explain", "create", "sink") {
		st.Explain, at = true, 1
	} else if !is(w, 0, "create", "sink") {
		return false, false, nil
	}
	st.Kind = KindCreateSink
	p := &customParser{st: st, w: w, i: at + 2}
	if is(w, p.i, "if", "not", "exists") {
		st.IfNotExists, p.i = true, p.i+3
	}
	if st.Name = p.name(); p.err != nil {
		return true, false, p.err
	}
	with := sinkWith(w, p.i)
	if with < 0 {
		e := sqlerr.New(sqlerr.SyntaxError, "CREATE SINK needs WITH (connector = …) at its end")
		e.Position = Position(st.Input, st.End)
		return true, false, e
	}
	switch {
	case is(w, p.i, "from"):
		p.i++
		st.SinkFrom = p.name()
		if p.err == nil && p.i != with {
			p.fail()
		}
	case is(w, p.i, "as") && with > p.i+1:
		std = true
		blank(text, w[0].start, w[p.i].end)
		p.i = with
	default:
		p.fail()
	}
	if p.err != nil {
		return true, false, p.err
	}
	if err := sinkOptions(p, text); err != nil {
		return true, false, err
	}
	return true, std, nil // the FROM form is blanked whole by the caller
}

// sinkWith returns the index of the WITH opening the sink's options: the
// last one at parenthesis depth 0 from word from on that is followed by
// a parenthesis closing at the end or before FORMAT (a query's own WITH
// is followed by a name). -1 when there is none.
func sinkWith(w []word, from int) int {
	found, depth := -1, 0
	for i := from; i < len(w); i++ {
		switch w[i].raw {
		case "(":
			depth++
		case ")":
			depth--
		}
		if depth != 0 || !is(w, i, "with") || i+1 >= len(w) || w[i+1].raw != "(" {
			continue
		}
		if end, ok := closingParen(w, i+1); ok && (end == len(w)-1 || is(w, end+1, "format")) {
			found = i
		}
	}
	return found
}

// sinkOptions reads WITH (…) [FORMAT … ENCODE …] from p.i, which must
// end the statement, and blanks them.
func sinkOptions(p *customParser, text []byte) error {
	start := p.i
	p.i += 2
	p.st.With, p.st.HasWith = p.options(), true
	if p.err == nil && is(p.w, p.i, "format") {
		p.i++
		p.format()
	}
	if p.err == nil && p.i < len(p.w) {
		p.fail()
	}
	if p.err != nil {
		return p.err
	}
	blank(text, p.w[start].start, p.w[len(p.w)-1].end)
	return nil
}

// dropSink finds the word SINK of DROP SINK, which is parsed as DROP VIEW.
func dropSink(w []word) (span struct{ start, end int }, ok bool) {
	if !is(w, 0, "drop", "sink") || len(w[1].raw) != len("view") {
		return span, false
	}
	span.start, span.end = w[1].start, w[1].end
	return span, true
}
