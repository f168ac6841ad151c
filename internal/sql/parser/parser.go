package parser

import (
	"context"
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
	KindAlterAmplification    Kind = "alter_amplification"
	KindDescribe              Kind = "describe"
	KindShowTables            Kind = "show_tables"
	KindShowMaterializedViews Kind = "show_materialized_views"
	KindShowSources           Kind = "show_sources"
	KindShowCreate            Kind = "show_create"
	KindShowSinks             Kind = "show_sinks"
	// KindCreateSink is CREATE SINK (sink.go): Node holds the query of
	// the AS form, SinkFrom the relation of the FROM form.
	KindCreateSink Kind = "create_sink"
)

// ObjectKind is the kind of relation a custom statement names.
type ObjectKind string

// Object kinds.
const (
	ObjectTable            ObjectKind = "table"
	ObjectMaterializedView ObjectKind = "materialized view"
	ObjectSource           ObjectKind = "source"
	ObjectSink             ObjectKind = "sink"
)

// Statement is one parsed statement.
type Statement struct {
	Kind Kind
	// Node is pg_query's AST of a standard statement (nil otherwise). Its
	// Locations are byte offsets into Input from Base on (Position turns
	// one into a character position in Input).
	Node *pg_query.Node
	Base int
	// Input is the whole text given to Parse; Start and End delimit this
	// statement in it (bytes, without the trailing semicolon).
	Input      string
	Start, End int
	// AppendOnly is set for CREATE TABLE … APPEND ONLY.
	AppendOnly bool
	// Graceful is set for DROP MATERIALIZED VIEW … GRACEFUL: the drop
	// travels as a Stop barrier and waits for the final epoch to commit.
	Graceful bool
	// Source is set for CREATE SOURCE and DROP SOURCE, which pg_query
	// parses as CREATE TABLE and DROP TABLE (source.go).
	Source bool
	// Sink is set for DROP SINK, which pg_query parses as DROP VIEW.
	Sink bool
	// SinkFrom is the relation of CREATE SINK … FROM relation;
	// IfNotExists is CREATE SINK IF NOT EXISTS.
	SinkFrom    string
	IfNotExists bool
	// Explain is set for EXPLAIN CREATE SINK.
	Explain bool
	// With holds the WITH (…) options after a CREATE TABLE's or CREATE
	// SOURCE's column list; HasWith is set when the clause is there,
	// even empty. Format, Encode and EncodeOptions are FORMAT … ENCODE …
	// (…), upper-cased.
	With    []Option
	HasWith bool
	// Watermark is the column list's WATERMARK FOR … AS …, if any.
	Watermark *WatermarkDef
	// EmitOnWindowClose is set for a CREATE MATERIALIZED VIEW ending in
	// EMIT ON WINDOW CLOSE.
	EmitOnWindowClose bool
	Format            string
	Encode            string
	EncodeOptions     []Option

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
	// AmpLimit and AmpAction are ALTER … SET (amplification_limit = N,
	// amplification_action = '…'): nil and "" when not given.
	AmpLimit  *int64
	AmpAction string
}

// SQL returns the statement's own text, trimmed.
func (s *Statement) SQL() string { return strings.TrimSpace(s.Input[s.Start:s.End]) }

// Position turns a byte offset into Input (an AST Location) into the
// 1-based character position Postgres reports; 0 for an unknown (-1)
// location.
func (s *Statement) Position(loc int32) int {
	if loc < 0 {
		return 0
	}
	return Position(s.Input, s.Base+int(loc))
}

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

// Parse parses sql into its statements (ParseContext without a context).
func Parse(sql string) ([]Statement, error) { return ParseContext(context.Background(), sql) }

// ParseContext parses sql into its statements. Empty statements (stray
// semicolons, comments) are skipped. As in Postgres, an error anywhere
// fails the whole text, and the first error is reported. A long text is
// parsed in batches, between which ctx's cancellation is honoured (its
// cause returned).
//
// Sluice's own statements and words are blanked out of the text pg_query
// parses, and each batch of standard statements is parsed in one call:
// parsing each statement with the whole text before it blanked was
// quadratic (40 000 statements in one Query took 52 s).
func ParseContext(ctx context.Context, sql string) ([]Statement, error) {
	return ParseWithin(ctx, sql, 0)
}

// ParseWithin is ParseContext refusing, with 54000, a text whose parse
// would take more than memLimit bytes (0: no limit); see checkSize.
func ParseWithin(ctx context.Context, sql string, memLimit int64) ([]Statement, error) {
	if err := checkSize(int64(len(sql)), scanBytesPerByte, memLimit); err != nil {
		return nil, err
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		// The scanner failed (an unterminated string or comment): the
		// parser reports the same problem with a position.
		return nil, parseError(sql, sql, 0, parseWhole(sql))
	}
	if err := checkSize(int64(len(scan.Tokens)), parseBytesPerToken, memLimit); err != nil {
		return nil, err
	}
	pieces := split(sql, scan.Tokens)
	out := make([]Statement, len(pieces))
	text := []byte(sql) // what pg_query parses: Sluice's statements blanked
	var standard []int  // the pieces pg_query parses
	var firstErr error  // the first custom statement's or depth error
	for i, p := range pieces {
		std, err := preparePiece(sql, p, &out[i], text)
		if err != nil {
			firstErr = err
			break
		}
		if std {
			standard = append(standard, i)
		}
	}
	// A syntax error in a statement before firstErr's comes first.
	for len(standard) > 0 {
		n := batchLen(pieces, standard)
		if err := parseBatch(ctx, sql, text, pieces, out, standard[:n]); err != nil {
			return nil, err
		}
		standard = standard[n:]
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// A batch holds up to batchStatements statements, and more than
// batchBytes of text only when one statement is that long: about 10 ms of
// parsing, so a cancel takes effect quickly.
const (
	batchStatements = 1000
	batchBytes      = 256 << 10
)

// batchLen returns how many of the standard pieces go in the next batch.
func batchLen(pieces []piece, standard []int) int {
	start := pieces[standard[0]].start
	n := 1
	for n < len(standard) && n < batchStatements && pieces[standard[n]].end-start <= batchBytes {
		n++
	}
	return n
}

// parseBatch parses the standard pieces batch (indexes into pieces and
// out, in order) with one call of pg_query over the text they span, and
// sets their Node and Base.
func parseBatch(ctx context.Context, sql string, text []byte, pieces []piece, out []Statement, batch []int) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	base := pieces[batch[0]].start
	span := string(text[base:pieces[batch[len(batch)-1]].end])
	tree, err := parseTree(span)
	if err != nil {
		return parseError(sql, span, base, err)
	}
	if len(tree.Stmts) != len(batch) {
		return sqlerr.Errorf(sqlerr.Internal, "parser: %d statements found, %d expected", len(tree.Stmts), len(batch))
	}
	for k, i := range batch {
		out[i].Node = tree.Stmts[k].Stmt
		out[i].Base = base
	}
	return nil
}

// preparePiece fills st for the piece p: a custom statement is parsed and
// blanked out of text; a standard one (std) is checked for depth and has
// Sluice's own words in it (APPEND ONLY, GRACEFUL) blanked.
func preparePiece(sql string, p piece, st *Statement, text []byte) (std bool, err error) {
	*st = Statement{Kind: KindStandard, Input: sql, Start: p.start, End: p.end}
	words := wordsOf(sql, p.toks)
	if ok, std, err := createSink(st, words, text); ok || err != nil {
		if err != nil || !std {
			blank(text, p.start, p.end)
			return false, err
		}
		return true, checkNesting(sql, p)
	}
	if ok, err := parseCustom(st, words); ok || err != nil {
		blank(text, p.start, p.end)
		return false, err
	}
	if err := checkNesting(sql, p); err != nil {
		return false, err
	}
	if at, ok := appendOnly(words); ok {
		st.AppendOnly = true
		blank(text, at.start, at.end)
	}
	if err := sourceClauses(st, words, text); err != nil {
		return false, err
	}
	if at, ok := dropSource(words); ok {
		st.Source = true
		copy(text[at.start:at.end], "table ")
	}
	if at, ok := dropSink(words); ok {
		st.Sink = true
		copy(text[at.start:at.end], "view")
	}
	if at, ok := emitOnWindowClose(words); ok {
		st.EmitOnWindowClose = true
		blank(text, at.start, at.end)
	}
	if at, ok := gracefulDrop(words); ok {
		st.Graceful = true
		blank(text, at.start, at.end)
	}
	return true, nil
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

// blank replaces the bytes [start, end) of text by spaces (newlines
// kept), so offsets stay valid and nothing there is parsed.
func blank(text []byte, start, end int) {
	for i := start; i < end; i++ {
		if text[i] != '\n' {
			text[i] = ' '
		}
	}
}

// parseError converts a pg_query error on text (sql from byte base on,
// with parts blanked byte for byte) into a 42601 with a position counted
// in characters of sql. pg_query's cursor counts characters of text,
// where a blanked character is as many spaces as it had bytes, so it is
// turned into a byte offset first.
func parseError(sql, text string, base int, err error) error {
	if se, ok := sqlerr.As(err); ok {
		return se
	}
	pe, ok := err.(*pgparser.Error)
	if !ok {
		return sqlerr.Errorf(sqlerr.SyntaxError, "%v", err)
	}
	e := sqlerr.New(sqlerr.SyntaxError, pe.Message)
	if pe.Cursorpos > 0 {
		e.Position = Position(sql, base+byteOffset(text, pe.Cursorpos-1))
	}
	return e
}

// byteOffset returns the byte offset of the n-th character (0-based) of s.
func byteOffset(s string, n int) int {
	for off := range s {
		if n == 0 {
			return off
		}
		n--
	}
	return len(s)
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
