package parser

import (
	"fmt"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Kind says which statement a Statement is. KindStandard statements carry
// pg_query's AST in Node; the others are Sluice's own and carry their
// arguments in the Statement's fields.
type Kind string

// Statement kinds.
const (
	KindStandard              Kind = "standard"
	KindFlush                 Kind = "flush"
	KindShowJobs              Kind = "show_jobs"
	KindCancelJobs            Kind = "cancel_jobs"
	KindRecover               Kind = "recover"
	KindAlterRateLimit        Kind = "alter_rate_limit"
	KindAlterPause            Kind = "alter_pause"
	KindAlterResume           Kind = "alter_resume"
	KindDescribe              Kind = "describe"
	KindShowTables            Kind = "show_tables"
	KindShowMaterializedViews Kind = "show_materialized_views"
)

// ObjectKind is the kind of relation a custom statement names.
type ObjectKind string

// Object kinds.
const (
	ObjectTable            ObjectKind = "table"
	ObjectMaterializedView ObjectKind = "materialized view"
)

// Statement is one parsed statement.
type Statement struct {
	Kind Kind
	// Node is pg_query's AST of a standard statement (nil otherwise). Its
	// Locations are byte offsets into Input.
	Node *pg_query.Node
	// Input is the whole text given to Parse; Start and End delimit this
	// statement in it (bytes, without the trailing semicolon).
	Input      string
	Start, End int
	// AppendOnly is set for CREATE TABLE … APPEND ONLY.
	AppendOnly bool
	// Graceful is set for DROP MATERIALIZED VIEW … GRACEFUL: the drop
	// travels as a Stop barrier and waits for the final epoch to commit.
	Graceful bool

	// Fields of the custom statements.

	// Object and Name: the relation of ALTER, RECOVER (Name empty for a
	// whole-system RECOVER) and DESCRIBE (Object empty).
	Object ObjectKind
	Name   string
	// JobIDs of CANCEL JOBS.
	JobIDs []uint64
	// Setting is the lower-case rate limit name of ALTER … SET
	// (rate_limit, source_rate_limit, backfill_rate_limit); Limit is its
	// value, nil for DEFAULT.
	Setting string
	Limit   *int64
}

// SQL returns the statement's own text, trimmed.
func (s *Statement) SQL() string { return strings.TrimSpace(s.Input[s.Start:s.End]) }

// Position turns a byte offset into Input (an AST Location) into the
// 1-based character position Postgres reports; 0 for an unknown (-1)
// location.
func (s *Statement) Position(loc int32) int { return Position(s.Input, int(loc)) }

// Position converts a byte offset in input to a 1-based character
// position; 0 when off is negative.
func Position(input string, off int) int {
	if off < 0 {
		return 0
	}
	if off > len(input) {
		off = len(input)
	}
	return utf8.RuneCountInString(input[:off]) + 1
}

// Parse parses sql into its statements. Empty statements (stray
// semicolons, comments) are skipped.
func Parse(sql string) ([]Statement, error) {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		// The scanner failed (an unterminated string or comment): the
		// parser reports the same problem with a position.
		return nil, parseError(sql, 0, parseWhole(sql))
	}
	var out []Statement
	for _, piece := range split(sql, scan.Tokens) {
		st, err := parsePiece(sql, piece)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func parseWhole(sql string) error {
	_, err := pg_query.Parse(sql)
	if err == nil {
		return fmt.Errorf("parser: cannot scan statement")
	}
	return err
}

// piece is one statement's tokens and byte range.
type piece struct {
	start, end int
	toks       []*pg_query.ScanToken
}

// split cuts the token stream at top-level semicolons, dropping comments
// and empty statements. Parentheses matter: CREATE FUNCTION bodies are
// dollar-quoted, so a semicolon at depth 0 always ends a statement.
func split(sql string, toks []*pg_query.ScanToken) []piece {
	var out []piece
	cur := piece{start: -1}
	flush := func(end int) {
		if len(cur.toks) > 0 {
			cur.end = end
			out = append(out, cur)
		}
		cur = piece{start: -1}
	}
	for _, t := range toks {
		switch t.Token {
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
			continue
		case pg_query.Token_ASCII_59:
			flush(int(t.Start))
			continue
		}
		if cur.start < 0 {
			cur.start = int(t.Start)
		}
		cur.toks = append(cur.toks, t)
	}
	flush(len(sql))
	return out
}

func parsePiece(sql string, p piece) (Statement, error) {
	st := Statement{Kind: KindStandard, Input: sql, Start: p.start, End: p.end}
	words := wordsOf(sql, p.toks)
	if ok, err := parseCustom(&st, words); ok || err != nil {
		return st, err
	}
	if err := checkNesting(sql, p); err != nil {
		return st, err
	}
	text := blankOutside(sql, p.start, p.end)
	if at, ok := appendOnly(words); ok {
		st.AppendOnly = true
		text = blankRange(text, at.start, at.end)
	}
	if at, ok := gracefulDrop(words); ok {
		st.Graceful = true
		text = blankRange(text, at.start, at.end)
	}
	tree, err := parseTree(text)
	if err != nil {
		return st, parseError(sql, p.start, err)
	}
	if len(tree.Stmts) != 1 {
		return st, sqlerr.Errorf(sqlerr.SyntaxError, "expected one statement, found %d", len(tree.Stmts))
	}
	st.Node = tree.Stmts[0].Stmt
	return st, nil
}

// blankOutside returns sql with every byte outside [start, end) replaced
// by a space (newlines kept), so offsets stay valid and nothing else is
// parsed.
func blankOutside(sql string, start, end int) string {
	b := []byte(sql[:end])
	for i := 0; i < start; i++ {
		if b[i] != '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

func blankRange(s string, start, end int) string {
	b := []byte(s)
	for i := start; i < end; i++ {
		b[i] = ' '
	}
	return string(b)
}

// parseError converts a pg_query error into a 42601 with a position
// counted in characters of the whole input. pg_query parsed a text whose
// first start bytes were blanked to one-byte spaces, so its cursor
// counts bytes up to start and characters after.
func parseError(sql string, start int, err error) error {
	if se, ok := sqlerr.As(err); ok {
		return se
	}
	pe, ok := err.(*pgparser.Error)
	if !ok {
		return sqlerr.Errorf(sqlerr.SyntaxError, "%v", err)
	}
	e := sqlerr.New(sqlerr.SyntaxError, pe.Message)
	if pe.Cursorpos > 0 {
		e.Position = Position(sql, start) - 1 + (pe.Cursorpos - start)
	}
	return e
}

// syntaxErrorAt is the error of the hand-written grammar: Postgres's
// wording, pointing at the token it stopped on (or the end of input).
func syntaxErrorAt(w []word, i int, st *Statement) error {
	if i >= len(w) {
		e := sqlerr.New(sqlerr.SyntaxError, "syntax error at end of input")
		e.Position = Position(st.Input, st.End)
		return e
	}
	e := sqlerr.Errorf(sqlerr.SyntaxError, "syntax error at or near %q", w[i].raw)
	e.Position = Position(st.Input, w[i].start)
	return e
}
