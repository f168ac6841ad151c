package parser

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// word is one token of a statement as the hand-written grammar sees it:
// unquoted words lower-cased, quoted identifiers unquoted with case kept.
type word struct {
	text       string
	raw        string
	quoted     bool
	start, end int
}

func wordsOf(sql string, toks []*pg_query.ScanToken) []word {
	out := make([]word, 0, len(toks))
	for _, t := range toks {
		raw := sql[t.Start:t.End]
		w := word{raw: raw, text: strings.ToLower(raw), start: int(t.Start), end: int(t.End)}
		if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
			w.text = strings.ReplaceAll(raw[1:len(raw)-1], `""`, `"`)
			w.quoted = true
		}
		out = append(out, w)
	}
	return out
}

// is reports whether words w[i:] start with the given lower-case keywords.
func is(w []word, i int, kws ...string) bool {
	if len(w)-i < len(kws) {
		return false
	}
	for j, k := range kws {
		if w[i+j].quoted || w[i+j].text != k {
			return false
		}
	}
	return true
}

// appendOnly finds RisingWave's `APPEND ONLY` in a CREATE TABLE: the two
// words at parenthesis depth 0, after the column list.
func appendOnly(w []word) (span struct{ start, end int }, ok bool) {
	if !is(w, 0, "create", "table") {
		return span, false
	}
	depth := 0
	for i := range w {
		switch w[i].raw {
		case "(":
			depth++
		case ")":
			depth--
		}
		if depth == 0 && is(w, i, "append", "only") {
			span.start, span.end = w[i].start, w[i+1].end
			return span, true
		}
	}
	return span, false
}

// gracefulDrop finds the trailing GRACEFUL of `DROP MATERIALIZED VIEW …
// GRACEFUL`, Sluice's barrier-carried drop; pg_query parses the rest.
func gracefulDrop(w []word) (span struct{ start, end int }, ok bool) {
	if !is(w, 0, "drop", "materialized", "view") || len(w) < 5 || !is(w, len(w)-1, "graceful") {
		return span, false
	}
	last := w[len(w)-1]
	span.start, span.end = last.start, last.end
	return span, true
}

// emitOnWindowClose finds the trailing EMIT ON WINDOW CLOSE of a CREATE
// MATERIALIZED VIEW, explained or not.
func emitOnWindowClose(w []word) (span struct{ start, end int }, ok bool) {
	n := len(w)
	if n < 8 || !is(w, n-4, "emit", "on", "window", "close") {
		return span, false
	}
	k := 0
	if is(w, 0, "explain") {
		for k < n-4 && !is(w, k, "create", "materialized", "view") {
			k++
		}
	}
	if !is(w, k, "create", "materialized", "view") {
		return span, false
	}
	span.start, span.end = w[n-4].start, w[n-1].end
	return span, true
}

// dropSource finds the word SOURCE of DROP SOURCE, which is parsed as
// DROP TABLE (the words have the same length).
func dropSource(w []word) (span struct{ start, end int }, ok bool) {
	if !is(w, 0, "drop", "source") || len(w[1].raw) != len("source") {
		return span, false
	}
	span.start, span.end = w[1].start, w[1].end
	return span, true
}

// parseCustom parses st's words with the hand-written grammar. ok is
// false when the words are no custom statement (pg_query's turn).
func parseCustom(st *Statement, w []word) (ok bool, err error) {
	p := &customParser{st: st, w: w}
	switch {
	case is(w, 0, "flush"):
		st.Kind, p.i = KindFlush, 1
	case is(w, 0, "show", "jobs"):
		st.Kind, p.i = KindShowJobs, 2
	case is(w, 0, "show", "tables"):
		st.Kind, p.i = KindShowTables, 2
	case is(w, 0, "show", "sources"):
		st.Kind, p.i = KindShowSources, 2
	case is(w, 0, "show", "sinks"):
		st.Kind, p.i = KindShowSinks, 2
	case is(w, 0, "show", "create"):
		st.Kind, p.i = KindShowCreate, 2
		p.object()
	case is(w, 0, "show", "materialized", "views"):
		st.Kind, p.i = KindShowMaterializedViews, 3
	case is(w, 0, "cancel", "jobs"), is(w, 0, "cancel", "job"):
		st.Kind, p.i = KindCancelJobs, 2
		p.jobIDs()
	case is(w, 0, "recover"):
		st.Kind, p.i = KindRecover, 1
		if p.i < len(w) {
			p.object()
		}
	case is(w, 0, "describe"), is(w, 0, "desc"):
		st.Kind, p.i = KindDescribe, 1
		st.Name = p.name()
	case is(w, 0, "alter", "materialized", "view"), is(w, 0, "alter", "table"), is(w, 0, "alter", "sink"):
		if !p.alter() {
			st.Object, st.Name = "", ""
			return false, nil
		}
	default:
		return false, nil
	}
	if p.err == nil && p.i < len(w) {
		p.fail()
	}
	return true, p.err
}

type customParser struct {
	st  *Statement
	w   []word
	i   int
	err error
}

func (p *customParser) fail() {
	if p.err == nil {
		p.err = syntaxErrorAt(p.w, p.i, p.st)
	}
}

// name reads a possibly schema-qualified relation name; the schema is
// dropped (Sluice has one schema).
func (p *customParser) name() string {
	var n string
	for {
		if p.err != nil || p.i >= len(p.w) || !isIdent(p.w[p.i]) {
			p.fail()
			return ""
		}
		n = p.w[p.i].text
		p.i++
		if p.i < len(p.w) && p.w[p.i].raw == "." {
			p.i++
			continue
		}
		return n
	}
}

func isIdent(w word) bool {
	if w.quoted {
		return true
	}
	c := w.text[0]
	return c == '_' || (c >= 'a' && c <= 'z') || c >= 0x80
}

// object reads `MATERIALIZED VIEW name` or `TABLE name` (or `SOURCE
// name`, for SHOW CREATE).
func (p *customParser) object() {
	switch {
	case is(p.w, p.i, "materialized", "view"):
		p.st.Object, p.i = ObjectMaterializedView, p.i+2
	case is(p.w, p.i, "table"):
		p.st.Object, p.i = ObjectTable, p.i+1
	case is(p.w, p.i, "source") && p.st.Kind == KindShowCreate:
		p.st.Object, p.i = ObjectSource, p.i+1
	case is(p.w, p.i, "sink"):
		p.st.Object, p.i = ObjectSink, p.i+1
	default:
		p.fail()
		return
	}
	p.st.Name = p.name()
}

func (p *customParser) jobIDs() {
	for {
		if p.i >= len(p.w) {
			p.fail()
			return
		}
		id, err := strconv.ParseUint(p.w[p.i].raw, 10, 64)
		if err != nil {
			p.fail()
			return
		}
		p.st.JobIDs = append(p.st.JobIDs, id)
		p.i++
		if p.i < len(p.w) && p.w[p.i].raw == "," {
			p.i++
			continue
		}
		return
	}
}

// alter parses ALTER … SET <x>_RATE_LIMIT (=|TO) (N|DEFAULT) and ALTER …
// PAUSE|RESUME; it reports false for any other ALTER, which pg_query
// parses.
func (p *customParser) alter() bool {
	p.i = 1
	p.object()
	if p.err != nil {
		p.err = nil
		return false
	}
	switch {
	case is(p.w, p.i, "pause"):
		p.st.Kind = KindAlterPause
		p.i++
	case is(p.w, p.i, "resume"):
		p.st.Kind = KindAlterResume
		p.i++
	case is(p.w, p.i, "set", "rate_limit"), is(p.w, p.i, "set", "source_rate_limit"),
		is(p.w, p.i, "set", "backfill_rate_limit"), is(p.w, p.i, "set", "streaming_rate_limit"):
		p.st.Kind = KindAlterRateLimit
		p.st.Setting = p.w[p.i+1].text
		p.i += 2
		p.rateLimit()
	case is(p.w, p.i, "set") && p.i+1 < len(p.w) && p.w[p.i+1].raw == "(":
		p.st.Kind = KindAlterAmplification
		p.i += 2
		p.ampOptions()
	default:
		return false
	}
	return true
}

// ampOptions parses the amplification guard's options of ALTER … SET (
// amplification_limit = N, amplification_action = 'notice|throttle|pause' ).
func (p *customParser) ampOptions() {
	for p.err == nil {
		if p.i+2 >= len(p.w) || p.w[p.i+1].raw != "=" {
			p.fail()
			return
		}
		key, val := p.w[p.i].text, p.w[p.i+2].raw
		p.i += 3
		switch key {
		case "amplification_limit":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				p.fail()
				return
			}
			p.st.AmpLimit = &n
		case "amplification_action":
			p.st.AmpAction = strings.ToLower(strings.Trim(val, "'"))
		default:
			p.err = sqlerr.Errorf(sqlerr.InvalidParameterValue,
				"unrecognized option %q: ALTER … SET ( … ) takes amplification_limit and amplification_action", key)
			return
		}
		switch {
		case p.i < len(p.w) && p.w[p.i].raw == ",":
			p.i++
		case p.i < len(p.w) && p.w[p.i].raw == ")":
			p.i++
			return
		default:
			p.fail()
			return
		}
	}
}

func (p *customParser) rateLimit() {
	if p.i < len(p.w) && (p.w[p.i].raw == "=" || is(p.w, p.i, "to")) {
		p.i++
	} else {
		p.fail()
		return
	}
	if is(p.w, p.i, "default") {
		p.i++
		return
	}
	if p.i >= len(p.w) {
		p.fail()
		return
	}
	n, err := strconv.ParseInt(p.w[p.i].raw, 10, 64)
	if err != nil || n < 0 {
		p.fail()
		return
	}
	p.st.Limit = &n
	p.i++
}
