package sqllogic

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

const resultsDelimiter = "----"

// ParseError is a malformed line; the whole file fails with it.
type ParseError struct {
	Loc Location
	Msg string
}

func (e *ParseError) Error() string { return fmt.Sprintf("parse error at %s: %s", e.Loc, e.Msg) }

// lineCursor walks a script line by line; line numbers are 1-based.
type lineCursor struct {
	lines []string
	pos   int // index of the next line
}

func (c *lineCursor) next() (string, bool) {
	if c.pos >= len(c.lines) {
		return "", false
	}
	c.pos++
	return c.lines[c.pos-1], true
}

func (c *lineCursor) peek() (string, bool) {
	if c.pos >= len(c.lines) {
		return "", false
	}
	return c.lines[c.pos], true
}

// isBlank treats whitespace-only lines as record separators. sqllogictest-rs
// only accepts truly empty lines; none of the peer files relies on the
// difference, and an invisible trailing space should not merge two records.
func isBlank(line string) bool { return strings.TrimSpace(line) == "" }

// parser holds what a header line leaves pending for the next record.
type parser struct {
	file       string
	cur        lineCursor
	conditions []Condition
	conn       string
}

// Parse splits a script into records. Include records are returned as they
// are; ParseFile expands them. name is used in locations only.
func Parse(name, script string) ([]Record, error) {
	script = strings.ReplaceAll(script, "\r\n", "\n")
	p := &parser{file: name, cur: lineCursor{lines: strings.Split(script, "\n")}}
	var out []Record
	for {
		line, ok := p.cur.next()
		if !ok {
			return out, nil
		}
		if strings.HasPrefix(line, "#") || isBlank(line) {
			continue
		}
		loc := Location{File: name, Line: p.cur.pos}
		rec, keep, err := p.parseHeader(loc, line)
		if err != nil {
			return nil, err
		}
		if keep {
			out = append(out, rec)
		}
	}
}

func (p *parser) errorf(loc Location, format string, args ...any) error {
	return &ParseError{Loc: loc, Msg: fmt.Sprintf(format, args...)}
}

// parseHeader dispatches on the first word of a record. keep is false for
// lines that only set parser state (skipif, onlyif, connection).
func (p *parser) parseHeader(loc Location, line string) (rec Record, keep bool, err error) {
	tokens := strings.Fields(line)
	rec = Record{Loc: loc}
	switch tokens[0] {
	case "skipif", "onlyif":
		if len(tokens) != 2 {
			return rec, false, p.errorf(loc, "%s needs one label: %q", tokens[0], line)
		}
		p.conditions = append(p.conditions, Condition{OnlyIf: tokens[0] == "onlyif", Label: tokens[1]})
		return rec, false, nil
	case "connection":
		if len(tokens) != 2 {
			return rec, false, p.errorf(loc, "connection needs one name: %q", line)
		}
		p.conn = tokens[1]
		if p.conn == "default" {
			p.conn = ""
		}
		return rec, false, nil
	case "statement":
		err = p.parseStatement(&rec, tokens[1:])
	case "query":
		err = p.parseQuery(&rec, tokens[1:])
	case "system":
		err = p.parseSystem(&rec, tokens[1:])
	case "let":
		err = p.parseLet(&rec, line)
	case "control":
		err = p.parseControl(&rec, tokens[1:])
	default:
		err = p.parseSimple(&rec, tokens)
	}
	return rec, err == nil, err
}

// attach hands the pending conditions and connection to a runnable record;
// like sqllogictest-rs, `connection` applies to the next record only.
func (p *parser) attach(rec *Record) {
	rec.Conditions, p.conditions = p.conditions, nil
	rec.Conn, p.conn = p.conn, ""
}

// parseSimple handles the one-line records.
func (p *parser) parseSimple(rec *Record, tokens []string) error {
	loc := rec.Loc
	switch {
	case tokens[0] == "include" && len(tokens) == 2:
		rec.Kind, rec.Arg = KindInclude, tokens[1]
	case tokens[0] == "halt" && len(tokens) == 1:
		rec.Kind = KindHalt
	case tokens[0] == "subtest" && len(tokens) >= 2:
		rec.Kind, rec.Arg = KindSubtest, strings.Join(tokens[1:], " ")
	case tokens[0] == "sleep" && len(tokens) == 2:
		d, err := parseDuration(tokens[1])
		if err != nil {
			return p.errorf(loc, "%v", err)
		}
		rec.Kind, rec.Arg, rec.Duration = KindSleep, tokens[1], d
	case tokens[0] == "hash-threshold" && len(tokens) == 2:
		n, err := strconv.Atoi(tokens[1])
		if err != nil || n < 0 {
			return p.errorf(loc, "invalid hash-threshold %q", tokens[1])
		}
		rec.Kind, rec.Threshold = KindHashThreshold, n
	default:
		return p.errorf(loc, "invalid line: %q", strings.Join(tokens, " "))
	}
	return nil
}

func (p *parser) parseControl(rec *Record, args []string) error {
	if len(args) != 2 {
		return p.errorf(rec.Loc, "invalid control: %q", strings.Join(args, " "))
	}
	rec.Arg = args[1]
	switch args[0] {
	case "sortmode":
		rec.Kind = KindSortMode
		if _, ok := parseSortMode(args[1]); !ok {
			return p.errorf(rec.Loc, "invalid sort mode %q", args[1])
		}
	case "resultmode":
		rec.Kind = KindResultMode
		if args[1] != "rowwise" && args[1] != "valuewise" {
			return p.errorf(rec.Loc, "invalid result mode %q", args[1])
		}
	case "substitution":
		rec.Kind = KindSubstitution
		if args[1] != "on" && args[1] != "off" {
			return p.errorf(rec.Loc, "invalid substitution %q", args[1])
		}
	default:
		return p.errorf(rec.Loc, "invalid control %q", args[0])
	}
	return nil
}

// splitRetry removes a trailing `retry N backoff D` from header tokens.
func (p *parser) splitRetry(loc Location, tokens []string) ([]string, Retry, error) {
	for i, t := range tokens {
		if t != "retry" {
			continue
		}
		if len(tokens) != i+4 || tokens[i+2] != "backoff" {
			return nil, Retry{}, p.errorf(loc, "retry must read `retry N backoff D`")
		}
		n, err := strconv.Atoi(tokens[i+1])
		if err != nil || n < 0 {
			return nil, Retry{}, p.errorf(loc, "invalid retry count %q", tokens[i+1])
		}
		d, err := parseDuration(tokens[i+3])
		if err != nil {
			return nil, Retry{}, p.errorf(loc, "%v", err)
		}
		return tokens[:i], Retry{Attempts: n, Backoff: d}, nil
	}
	return tokens, Retry{}, nil
}

func (p *parser) parseStatement(rec *Record, args []string) error {
	rec.Kind = KindStatement
	p.attach(rec)
	args, retry, err := p.splitRetry(rec.Loc, args)
	if err != nil {
		return err
	}
	rec.Retry = retry
	switch {
	case len(args) == 1 && args[0] == "ok":
	case len(args) >= 1 && args[0] == "error":
		if rec.Err, err = newExpectedError(args[1:]); err != nil {
			return p.errorf(rec.Loc, "%v", err)
		}
	case len(args) == 2 && args[0] == "count":
		n, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || n < 0 {
			return p.errorf(rec.Loc, "invalid count %q", args[1])
		}
		rec.Count, rec.HasCount = n, true
	default:
		return p.errorf(rec.Loc, "invalid statement header: %q", strings.Join(args, " "))
	}
	sql, delim, err := p.sqlLines(rec.Loc)
	if err != nil {
		return err
	}
	rec.SQL = sql
	if delim {
		return p.multilineError(rec)
	}
	return nil
}

// multilineError reads the `----` text of an expected error. Only a bare
// `error` may have one.
func (p *parser) multilineError(rec *Record) error {
	if rec.Err == nil {
		return p.errorf(rec.Loc, "statement has results; use `query` instead")
	}
	if rec.Err.Kind != ErrAny {
		return p.errorf(rec.Loc, "error message given both inline and under ----")
	}
	var text []string
	for {
		line, ok := p.cur.next()
		if !ok {
			break
		}
		// Two consecutive blank lines (or a blank line at EOF) end it.
		if isBlank(line) {
			if next, ok := p.cur.peek(); !ok || isBlank(next) {
				p.cur.next()
				break
			}
		}
		text = append(text, line)
	}
	rec.Err = &ExpectedError{Kind: ErrText, Text: strings.TrimSpace(strings.Join(text, "\n"))}
	return nil
}

func (p *parser) parseQuery(rec *Record, args []string) error {
	rec.Kind = KindQuery
	p.attach(rec)
	args, retry, err := p.splitRetry(rec.Loc, args)
	if err != nil {
		return err
	}
	rec.Retry = retry
	if len(args) >= 1 && args[0] == "error" {
		if rec.Err, err = newExpectedError(args[1:]); err != nil {
			return p.errorf(rec.Loc, "%v", err)
		}
	} else if len(args) >= 1 {
		rec.Types = args[0]
		if len(args) >= 2 {
			mode, ok := parseSortMode(args[1])
			if !ok {
				return p.errorf(rec.Loc, "invalid sort mode %q", args[1])
			}
			rec.Sort = mode
		}
		if len(args) >= 3 {
			rec.Label = args[2]
		}
	}
	sql, delim, err := p.sqlLines(rec.Loc)
	if err != nil {
		return err
	}
	rec.SQL = sql
	if !delim {
		return nil
	}
	if rec.Err != nil {
		return p.multilineError(rec)
	}
	rec.HasRows = true
	rec.Expected = p.resultLines()
	return nil
}

// resultLines reads expected lines up to the next blank line.
func (p *parser) resultLines() []string {
	var out []string
	for {
		line, ok := p.cur.next()
		if !ok || isBlank(line) {
			return out
		}
		out = append(out, line)
	}
}

func (p *parser) parseSystem(rec *Record, args []string) error {
	rec.Kind = KindSystem
	p.attach(rec)
	if len(args) != 1 || args[0] != "ok" {
		return p.errorf(rec.Loc, "only `system ok` is supported")
	}
	cmd, delim, err := p.sqlLines(rec.Loc)
	if err != nil {
		return err
	}
	rec.SQL = cmd
	if delim {
		rec.HasRows = true
		rec.Expected = p.resultLines()
	}
	return nil
}

// parseLet reads `let a, b` followed by a one-row query.
func (p *parser) parseLet(rec *Record, line string) error {
	rec.Kind = KindLet
	p.attach(rec)
	for _, v := range strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "let")), ",") {
		if v = strings.TrimSpace(v); v != "" {
			rec.Vars = append(rec.Vars, v)
		}
	}
	if len(rec.Vars) == 0 {
		return p.errorf(rec.Loc, "let needs variable names")
	}
	sql, delim, err := p.sqlLines(rec.Loc)
	if err != nil {
		return err
	}
	if delim {
		return p.errorf(rec.Loc, "let takes no ---- section")
	}
	rec.SQL = sql
	return nil
}

// sqlLines reads the body of a record up to a blank line or `----`.
func (p *parser) sqlLines(loc Location) (sql string, delim bool, err error) {
	first, ok := p.cur.next()
	if !ok || isBlank(first) {
		return "", false, p.errorf(loc, "record has no SQL")
	}
	lines := []string{first}
	for {
		line, ok := p.cur.next()
		if !ok || isBlank(line) {
			break
		}
		if strings.TrimRight(line, " \t") == resultsDelimiter {
			delim = true
			break
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), delim, nil
}

// parseDuration accepts Go durations and the humantime spellings the Rust
// runner takes (`1s`, `500ms`, `2min`, `1day`, `3 sec` without the space).
func parseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	units := []struct {
		suffix string
		unit   time.Duration
	}{
		{"msec", time.Millisecond}, {"millis", time.Millisecond}, {"secs", time.Second},
		{"sec", time.Second}, {"mins", time.Minute}, {"min", time.Minute},
		{"hours", time.Hour}, {"hour", time.Hour}, {"hr", time.Hour},
		{"days", 24 * time.Hour}, {"day", 24 * time.Hour}, {"d", 24 * time.Hour},
	}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			if n, err := strconv.ParseFloat(num, 64); err == nil && n >= 0 {
				return time.Duration(n * float64(u.unit)), nil
			}
		}
	}
	return 0, fmt.Errorf("invalid duration %q", s)
}
