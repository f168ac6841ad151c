package session

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// copyOptions are COPY's WITH options that Sluice understands.
type copyOptions struct {
	csv       bool
	binary    bool
	header    bool
	delimiter byte
	null      string
	quote     byte
}

// rowReader yields COPY rows as fields with NULL flags.
type rowReader interface {
	ReadRow() (fields []string, null []bool, err error)
	Line() int
}

// copyFrom runs COPY table [(cols)] FROM STDIN in the text, CSV or binary
// format: the rows are parsed with the columns' input (or binary receive)
// functions and written as one record when the data ends; the command tag
// counts them. A bad row fails the statement and nothing of it is written.
func (s *Session) copyFrom(ctx context.Context, cs *pg_query.CopyStmt, w pgwire.ResultWriter) error {
	if !cs.IsFrom || cs.Filename != "" || cs.IsProgram || cs.Relation == nil {
		return sqlerr.New(sqlerr.FeatureNotSupported, "only COPY table FROM STDIN is supported")
	}
	rel, ok := s.e.Catalog().ByName(cs.Relation.Relname)
	if !ok {
		return errNoRelation(cs.Relation.Relname)
	}
	if rel.Kind != catalog.KindTable {
		return sqlerr.Errorf(sqlerr.WrongObjectType, "cannot copy to %s %q", rel.Kind, rel.Name)
	}
	if err := rel.ConnectorOnlyError(); err != nil {
		return err
	}
	if err := s.mayDo(rel, "INSERT"); err != nil {
		return err
	}
	opts, err := parseCopyOptions(cs.Options)
	if err != nil {
		return err
	}
	targets, err := copyTargets(rel, cs.Attlist)
	if err != nil {
		return err
	}
	format := pgwire.CopyText
	if opts.binary {
		format = pgwire.CopyBinary
	}
	// Whether a COPY writes its rows once is decided before they arrive
	// (a view created meanwhile gets them from the table's actors).
	var buf engine.PieceBuffer
	if s.tx == nil {
		s.e.StartBulkLoad(rel, &buf)
	}
	if copyStarted != nil {
		copyStarted()
	}
	r, err := w.CopyIn(ctx, format, len(targets))
	if err != nil {
		buf.Release()
		return err
	}
	var dr datumReader
	switch {
	case opts.binary:
		dr = pgwire.NewCopyBinaryDecoder(r, targetTypes(rel, targets))
	case opts.csv:
		dr = &copyTextRows{rr: newCSVReader(r, opts), ts: targetTypes(rel, targets), header: opts.header}
	default:
		d := pgwire.NewCopyTextDecoder(r)
		d.Delimiter, d.Null = opts.delimiter, opts.null
		dr = &copyTextRows{rr: d, ts: targetTypes(rel, targets), header: opts.header}
	}
	n, err := s.loadRows(ctx, rel, targets, dr, &buf)
	if err != nil {
		return err
	}
	if err := s.maybeImplicitFlush(ctx, w); err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("COPY %d", n))
}

func parseCopyOptions(nodes []*pg_query.Node) (copyOptions, error) {
	o := copyOptions{delimiter: '\t', null: `\N`, quote: '"'}
	delimSet, nullSet := false, false
	for _, n := range nodes {
		d := n.GetDefElem()
		val := defText(d.Arg)
		switch strings.ToLower(d.Defname) {
		case "format":
			switch strings.ToLower(val) {
			case "csv":
				o.csv = true
			case "binary":
				o.binary = true
			case "text":
			default:
				return o, sqlerr.Errorf(sqlerr.FeatureNotSupported, "COPY format %q is not supported", val)
			}
		case "header":
			o.header = d.Arg == nil || isTrueText(val)
		case "delimiter":
			if len(val) != 1 {
				return o, sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
			}
			o.delimiter, delimSet = val[0], true
		case "null":
			o.null, nullSet = val, true
		case "quote":
			if len(val) != 1 {
				return o, sqlerr.New(sqlerr.FeatureNotSupported, "COPY quote must be a single one-byte character")
			}
			o.quote = val[0]
		default:
			return o, sqlerr.Errorf(sqlerr.FeatureNotSupported, "COPY option %q is not supported", d.Defname)
		}
	}
	if o.csv && !delimSet {
		o.delimiter = ','
	}
	if o.csv && !nullSet {
		o.null = ""
	}
	return o, nil
}

func defText(n *pg_query.Node) string {
	switch {
	case n == nil:
		return ""
	case n.GetString_() != nil:
		return n.GetString_().Sval
	case n.GetBoolean() != nil:
		return fmt.Sprint(n.GetBoolean().Boolval)
	case n.GetInteger() != nil:
		return fmt.Sprint(n.GetInteger().Ival)
	}
	return ""
}

func isTrueText(s string) bool {
	b, err := checkBool(s)
	return err == nil && b == "true"
}

// copyTargets maps the column list to visible column positions.
func copyTargets(rel *catalog.Relation, list []*pg_query.Node) ([]int, error) {
	var vis []int
	for i, c := range rel.Columns {
		if !c.Hidden {
			vis = append(vis, i)
		}
	}
	if len(list) == 0 {
		return vis, nil
	}
	var out []int
	for _, n := range list {
		name := n.GetString_().GetSval()
		found := -1
		for _, i := range vis {
			if rel.Columns[i].Name == name {
				found = i
			}
		}
		if found < 0 {
			return nil, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, rel.Name)
		}
		out = append(out, found)
	}
	return out, nil
}

// datumReader yields COPY rows as values of the target columns, in order.
type datumReader interface {
	ReadRow() (types.Row, error)
	Line() int
}

// copyTextRows parses a text or CSV reader's fields with the columns' input
// functions.
type copyTextRows struct {
	rr     rowReader
	ts     []types.Type
	header bool // skip the first line
}

func (t *copyTextRows) Line() int { return t.rr.Line() }

func (t *copyTextRows) ReadRow() (types.Row, error) {
	fields, nulls, err := t.fields()
	if err != nil {
		return nil, err
	}
	row := make(types.Row, len(fields))
	for k, f := range fields {
		if nulls[k] {
			continue
		}
		if row[k], err = types.ParseDatum(f, t.ts[k]); err != nil {
			return nil, err
		}
	}
	return row, nil
}

// ReadRowInto parses the next row's fields straight into cols (target k
// into cols[pos[k]]), without boxing a value.
func (t *copyTextRows) ReadRowInto(cols []types.Column, pos []int) error {
	fields, nulls, err := t.fields()
	if err != nil {
		return err
	}
	for k, f := range fields {
		if nulls[k] {
			cols[pos[k]].Append(nil)
		} else if err := types.ParseAppend(cols[pos[k]], f); err != nil {
			return err
		}
	}
	return nil
}

// fields returns the next data row's fields, checked for their count.
func (t *copyTextRows) fields() ([]string, []bool, error) {
	fields, nulls, err := t.rr.ReadRow()
	if err == nil && t.header {
		t.header = false
		fields, nulls, err = t.rr.ReadRow()
	}
	if err != nil {
		return nil, nil, err
	}
	if len(fields) != len(t.ts) {
		return nil, nil, sqlerr.Errorf(sqlerr.Code("22P04"), "expected %d columns, got %d", len(t.ts), len(fields))
	}
	return fields, nulls, nil
}

// targetTypes returns the types of the COPY's target columns.
func targetTypes(rel *catalog.Relation, targets []int) []types.Type {
	ts := make([]types.Type, len(targets))
	for i, c := range targets {
		ts[i] = rel.Columns[c].Type
	}
	return ts
}

// loadRows reads every row and writes them as one record; it returns the
// count.
func (s *Session) loadRows(ctx context.Context, rel *catalog.Relation, targets []int, dr datumReader, buf *engine.PieceBuffer) (int, error) {
	vis := visibleTypes(rel)
	pos := make([]int, len(targets)) // target → index among visible columns
	for k, t := range targets {
		for _, c := range rel.Columns[:t] {
			if !c.Hidden {
				pos[k]++
			}
		}
	}
	read := rowsInto(dr, pos, len(vis))
	// In a transaction block too: the block keeps the pieces.
	if !hasDeclaredPK(rel) {
		return s.loadPieces(ctx, rel, vis, read, dr, buf)
	}
	buf.Release()
	return s.loadKeyedPieces(ctx, rel, vis, read, dr)
}

// readCopyRows appends every row of a COPY to b, handing each chunk b
// fills to full, and returns how many rows it read.
func readCopyRows(ctx context.Context, rel *catalog.Relation, dr datumReader, b *types.Builder, read func([]types.Column) error, full func(*types.Chunk) error) (int, error) {
	total := 0
	for {
		if total%1024 == 1023 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		c, err := b.AppendColumns(types.Insert, read)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return 0, copyErr(rel, dr.Line(), err)
		}
		total++
		if c != nil {
			if err := full(c); err != nil {
				return 0, err
			}
		}
	}
}

// copyStarted, when set, is called once a COPY decided how it writes its
// rows (a test's seam).
var copyStarted func()

// copyPieceRows is how many rows a COPY into a table keyed by its hidden
// row id reads before preparing them as one piece (engine.Prepare); a
// variable so that tests can cut small statements into pieces.
var copyPieceRows = 1 << 16

// loadPieces reads a COPY into a table keyed by its hidden row id piece
// by piece, encoding each as it goes (engine.Prepare), and writes the
// pieces together at the end: one synced batch, applied entirely or not
// at all, without ever holding the whole statement decoded.
// The pieces are encoded into buf, which may hold a bulk load: a large
// COPY outside a transaction block also builds the table's file of final
// keys as it goes, so its rows are written once (engine.StartBulkLoad).
func (s *Session) loadPieces(ctx context.Context, rel *catalog.Relation, vis []types.Type, read func([]types.Column) error, dr datumReader,
	buf *engine.PieceBuffer) (n int, err error) {
	return s.readPieces(ctx, rel, vis, read, dr, buf, s.writePieces)
}

// readPieces reads a COPY piece by piece, prepares each (pieceLoader),
// encoded into buf when given (nil: a buffer of the loader's own), then
// lets write write them all (retried as retryLocked does).
func (s *Session) readPieces(ctx context.Context, rel *catalog.Relation, vis []types.Type, read func([]types.Column) error, dr datumReader,
	buf *engine.PieceBuffer, write func(context.Context, *catalog.Relation, []*engine.Prepared) error) (n int, err error) {
	l := s.newPieceLoader(rel, vis, nil)
	if buf != nil {
		l.payloads, *buf = *buf, engine.PieceBuffer{} // the loader's now
	}
	defer func() {
		if err != nil {
			l.release()
		}
	}()
	prepare := func(c *types.Chunk) error { return l.prepare(ctx, c) }
	total, err := readCopyRows(ctx, rel, dr, l.b, read, prepare)
	if err != nil {
		return 0, err
	}
	if err := l.finish(ctx); err != nil {
		return 0, err
	}
	err = s.retryLocked(ctx, func() error { return write(ctx, rel, l.pieces) })
	return total, err
}

// writePieces writes a COPY's prepared pieces under the table's lock.
func (s *Session) writePieces(ctx context.Context, rel *catalog.Relation, pieces []*engine.Prepared) error {
	tw, done, err := s.lockTable(ctx, rel)
	if err != nil {
		return err
	}
	defer done()
	return s.commitPieces(ctx, tw, pieces)
}

// columnReader is a datumReader that can parse a row straight into
// column vectors.
type columnReader interface {
	ReadRowInto(cols []types.Column, pos []int) error
}

// rowsInto returns a Builder.AppendColumns fill that reads dr's next row
// into the visible columns (target k at pos[k], the others NULL). It
// returns io.EOF, before appending anything, when the rows end.
func rowsInto(dr datumReader, pos []int, nVisible int) func([]types.Column) error {
	var others []int // visible columns COPY does not name
	for c := range nVisible {
		if !slices.Contains(pos, c) {
			others = append(others, c)
		}
	}
	nulls := func(cols []types.Column) {
		for _, c := range others {
			cols[c].Append(nil)
		}
	}
	if cr, ok := dr.(columnReader); ok {
		return func(cols []types.Column) error {
			if err := cr.ReadRowInto(cols, pos); err != nil {
				return err
			}
			nulls(cols)
			return nil
		}
	}
	return func(cols []types.Column) error {
		vals, err := dr.ReadRow()
		if err != nil {
			return err
		}
		for k, v := range vals {
			cols[pos[k]].Append(v)
		}
		nulls(cols)
		return nil
	}
}

// copyErr adds COPY's context line, keeping the SQLSTATE.
func copyErr(rel *catalog.Relation, line int, err error) error {
	e, ok := sqlerr.As(err)
	if !ok {
		e = sqlerr.New(sqlerr.Code("22P04"), err.Error())
	}
	out := *e
	out.Message = fmt.Sprintf("%s (COPY %s, line %d)", e.Message, rel.Name, line)
	return &out
}

// csvReader parses COPY's CSV format: fields separated by the delimiter,
// optionally quoted (a doubled quote inside quotes is one quote, and
// quoted fields may span lines); an unquoted field equal to the NULL
// string is NULL, so "" (quoted) is an empty string but an empty unquoted
// field is NULL by default.
type csvReader struct {
	r      *bufio.Reader
	o      copyOptions
	line   int
	fields []string
	nulls  []bool
}

func newCSVReader(r io.Reader, o copyOptions) *csvReader {
	return &csvReader{r: bufio.NewReaderSize(r, 64<<10), o: o}
}

func (c *csvReader) Line() int { return c.line }

func (c *csvReader) ReadRow() ([]string, []bool, error) {
	c.fields, c.nulls = c.fields[:0], c.nulls[:0]
	line, err := c.readLine()
	if err != nil {
		return nil, nil, err
	}
	if line == `\.` {
		return nil, nil, io.EOF
	}
	var cur strings.Builder
	quoted, inQuotes := false, false
	for i := 0; ; i++ {
		if i >= len(line) {
			if !inQuotes {
				break
			}
			// A quoted field continues on the next line.
			more, err := c.readLine()
			if err != nil {
				return nil, nil, sqlerr.New(sqlerr.Code("22P04"), "unterminated CSV quoted field")
			}
			cur.WriteByte('\n')
			line, i = more, -1
			continue
		}
		ch := line[i]
		switch {
		case inQuotes && ch == c.o.quote && i+1 < len(line) && line[i+1] == c.o.quote:
			cur.WriteByte(ch)
			i++
		case ch == c.o.quote:
			inQuotes, quoted = !inQuotes, true
		case !inQuotes && ch == c.o.delimiter:
			c.endField(cur.String(), quoted)
			cur.Reset()
			quoted = false
		default:
			cur.WriteByte(ch)
		}
	}
	c.endField(cur.String(), quoted)
	return c.fields, c.nulls, nil
}

func (c *csvReader) endField(s string, quoted bool) {
	null := !quoted && s == c.o.null
	if null {
		s = ""
	}
	c.fields = append(c.fields, s)
	c.nulls = append(c.nulls, null)
}

// readLine returns the next line without its line ending; io.EOF after the
// last.
func (c *csvReader) readLine() (string, error) {
	s, err := c.r.ReadString('\n')
	if err == io.EOF && s == "" {
		return "", io.EOF
	}
	if err != nil && err != io.EOF {
		return "", err
	}
	c.line++
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r"), nil
}
