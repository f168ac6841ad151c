package pgwire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

const codeBadCopyFileFormat sqlerr.Code = "22P04"

// CopyTextDecoder splits data in COPY's text format (the default of COPY
// FROM STDIN, and what psql's \copy sends) into rows of fields:
//
//   - one row per line, ended by "\n" (or "\r\n"); a last line without
//     one counts; a line holding only "\." ends the data;
//   - fields separated by Delimiter (tab by default);
//   - a field whose raw text equals Null ("\N" by default) is NULL;
//   - backslash escapes: \b \f \n \r \t \v, \ooo octal, \xhh hex, and a
//     backslash before any other character (the delimiter, a backslash)
//     stands for that character.
//
// CSV is left to the SQL layer (encoding/csv covers most of it).
type CopyTextDecoder struct {
	Delimiter byte   // '\t' unless set before the first ReadRow
	Null      string // "\\N" unless changed before the first ReadRow

	r      *bufio.Reader
	line   int
	ended  bool
	fields []string
	nulls  []bool
	long   []byte // a line longer than r's buffer (readLine)
	// lines holds whole lines taken from r's buffer as one string: the
	// fields of a line are substrings of it, one allocation per buffer
	// of lines instead of one per row (a million-row COPY's rows were a
	// million allocations).
	lines string
}

// NewCopyTextDecoder reads text-format rows from r (the reader CopyIn
// returned).
func NewCopyTextDecoder(r io.Reader) *CopyTextDecoder {
	return &CopyTextDecoder{Delimiter: '\t', Null: `\N`, r: bufio.NewReaderSize(r, 64<<10)}
}

// Line is the 1-based number of the line ReadRow last returned, for
// error messages ("COPY t, line 3").
func (d *CopyTextDecoder) Line() int { return d.line }

// ReadRow returns the fields of the next row; null[i] reports a NULL
// field (fields[i] is then ""). The slices are reused by the next call. It
// returns io.EOF after the last row.
func (d *CopyTextDecoder) ReadRow() (fields []string, null []bool, err error) {
	if d.ended {
		return nil, nil, io.EOF
	}
	line, err := d.nextLine()
	if len(line) == 0 && err != nil {
		d.ended = true
		if errors.Is(err, io.EOF) {
			return nil, nil, io.EOF
		}
		return nil, nil, err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == `\.` {
		d.ended = true
		return nil, nil, io.EOF
	}
	d.line++
	return d.splitLine(line)
}

// nextLine returns the next line with its '\n' (none on a last line
// without one). It takes every whole line r has buffered as one string
// and hands them out one by one; the first line after r's buffer ran dry,
// and a line longer than the buffer, are read on their own (readLine,
// which also meets r's errors: a failed fill here would drop one).
func (d *CopyTextDecoder) nextLine() (string, error) {
	if d.lines == "" && d.r.Buffered() > 0 {
		d.takeBuffered()
	}
	if i := strings.IndexByte(d.lines, '\n'); i >= 0 {
		line := d.lines[:i+1]
		d.lines = d.lines[i+1:]
		return line, nil
	}
	raw, err := d.readLine()
	return string(raw), err
}

// takeBuffered moves the whole lines in r's buffer into d.lines. A field
// kept after its row is written (few are: a bulk statement's rows are
// encoded and their columns reused) keeps the whole buffer of lines.
func (d *CopyTextDecoder) takeBuffered() {
	buf, _ := d.r.Peek(d.r.Buffered())
	if end := bytes.LastIndexByte(buf, '\n'); end >= 0 {
		d.lines = string(buf[:end+1])
		_, _ = d.r.Discard(end + 1)
	}
}

// readLine returns the next line with its '\n', valid until the next
// read: most lines come straight from the reader's buffer; one longer
// than the buffer is gathered in d.long.
func (d *CopyTextDecoder) readLine() ([]byte, error) {
	raw, err := d.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return raw, err
	}
	d.long = append(d.long[:0], raw...)
	for errors.Is(err, bufio.ErrBufferFull) {
		raw, err = d.r.ReadSlice('\n')
		d.long = append(d.long, raw...)
	}
	return d.long, err
}

// splitLine splits a line into fields. The fields without escapes are
// substrings of the line.
func (d *CopyTextDecoder) splitLine(line string) ([]string, []bool, error) {
	d.fields, d.nulls = d.fields[:0], d.nulls[:0]
	if d.Delimiter < utf8.RuneSelf && strings.IndexByte(line, '\\') < 0 && checkText(line) == nil {
		d.splitPlain(line)
		return d.fields, d.nulls, nil
	}
	return d.splitEscaped(line)
}

// splitEscaped is splitLine for any line: byte by byte, a backslash
// keeping the next byte from splitting, each field unescaped and checked.
func (d *CopyTextDecoder) splitEscaped(line string) ([]string, []bool, error) {
	start := 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) && line[i] == '\\' {
			i++ // the escaped byte never splits
			continue
		}
		if i < len(line) && line[i] != d.Delimiter {
			continue
		}
		field := line[start:min(i, len(line))]
		if field == d.Null {
			d.fields, d.nulls = append(d.fields, ""), append(d.nulls, true)
		} else {
			s, err := unescapeCopyField(field)
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", d.line, err)
			}
			d.fields, d.nulls = append(d.fields, s), append(d.nulls, false)
		}
		start = i + 1
	}
	return d.fields, d.nulls, nil
}

// splitPlain splits a valid line without a backslash: no field needs
// unescaping or its own UTF-8 check, so the delimiters are found with
// IndexByte instead of a byte-by-byte loop.
func (d *CopyTextDecoder) splitPlain(line string) {
	for start := 0; ; {
		end := len(line)
		if i := strings.IndexByte(line[start:], d.Delimiter); i >= 0 {
			end = start + i
		}
		if f := line[start:end]; f == d.Null {
			d.fields, d.nulls = append(d.fields, ""), append(d.nulls, true)
		} else {
			d.fields, d.nulls = append(d.fields, f), append(d.nulls, false)
		}
		if end == len(line) {
			return
		}
		start = end + 1
	}
}

// DecodeRow reads the next row and parses its fields as the given column
// types with Postgres's text input functions. Errors name the line.
func (d *CopyTextDecoder) DecodeRow(ts []types.Type) (types.Row, error) {
	fields, nulls, err := d.ReadRow()
	if err != nil {
		return nil, err
	}
	if len(fields) != len(ts) {
		what := "missing data for column"
		if len(fields) > len(ts) {
			what = "extra data after last expected column"
		}
		return nil, &sqlerr.Error{Code: codeBadCopyFileFormat, Message: what,
			Detail: fmt.Sprintf("COPY line %d: %d fields for %d columns", d.line, len(fields), len(ts))}
	}
	row := make(types.Row, len(ts))
	for i, f := range fields {
		if nulls[i] {
			continue
		}
		if row[i], err = types.ParseDatum(f, ts[i]); err != nil {
			if e, ok := sqlerr.As(err); ok && e.Detail == "" {
				e.Detail = fmt.Sprintf("COPY line %d, column %d", d.line, i+1)
			}
			return nil, err
		}
	}
	return row, nil
}

// unescapeCopyField is unescapeCopyText for a field without a backslash
// returned as it is, without a copy.
func unescapeCopyField(f string) (string, error) {
	if strings.IndexByte(f, '\\') < 0 {
		return f, checkText(f)
	}
	return unescapeCopyText([]byte(f))
}

// unescapeCopyText undoes COPY text escapes in one field.
func unescapeCopyText(b []byte) (string, error) {
	if bytes.IndexByte(b, '\\') < 0 {
		s := string(b)
		return s, checkText(s)
	}
	var sb strings.Builder
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			sb.WriteByte(b[i])
			continue
		}
		i++
		switch c := b[i]; c {
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		case 'x':
			v, n := scanDigits(b[i+1:], 16, 2)
			if n == 0 {
				sb.WriteByte('x') // "\x" without digits is a plain x
				continue
			}
			sb.WriteByte(byte(v))
			i += n
		default:
			if c >= '0' && c <= '7' {
				v, n := scanDigits(b[i:], 8, 3)
				sb.WriteByte(byte(v))
				i += n - 1
				continue
			}
			sb.WriteByte(c)
		}
	}
	s := sb.String()
	return s, checkText(s) // an escape may have made a NUL (\000)
}

// scanDigits reads up to maxN digits of base from b.
func scanDigits(b []byte, base, maxN int) (v, n int) {
	for n < maxN && n < len(b) {
		c := b[n]
		var d int
		switch {
		case c >= '0' && c <= '9' && c-'0' < byte(base):
			d = int(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return v, n
		}
		v = v*base + d
		n++
	}
	return v, n
}
