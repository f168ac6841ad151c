package pgwire

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/types"
)

// resultWriter is the connection's ResultWriter. One value is reused for
// every statement; beginSimple and beginExtended reset it.
//
// In the simple protocol each statement is Describe → rows → Complete and
// rows are always text. In the extended protocol the columns and their
// formats were fixed by Describe and Bind; rows beyond the Execute's row
// limit are kept in the portal for the next Execute (the statement itself
// runs to completion: sessions push rows, they cannot be paused).
type resultWriter struct {
	c *conn

	extended bool
	portal   *portal // extended: the portal being executed
	maxRows  int     // extended: rows to send before suspending; 0 = all

	cols    []Column
	oids    []uint32
	formats []int16
	open    bool // a statement was described and not yet completed
	ended   bool // a statement completed (or was empty) since begin
	copy    *copyReader

	buf    []byte // one row's encoded values, reused
	offs   []int
	values [][]byte
}

var _ ResultWriter = (*resultWriter)(nil)

func (w *resultWriter) beginSimple() {
	*w = resultWriter{c: w.c, buf: w.buf, offs: w.offs, values: w.values}
}

func (w *resultWriter) beginExtended(p *portal, maxRows int) {
	*w = resultWriter{c: w.c, buf: w.buf, offs: w.offs, values: w.values,
		extended: true, portal: p, maxRows: maxRows,
		cols: p.prep.cols, oids: p.prep.oids, formats: p.formats, open: true}
}

// endSimple checks that the session ended its last statement, and reports
// an empty query string the session said nothing about.
func (w *resultWriter) endSimple() error {
	if w.open {
		return fmt.Errorf("pgwire: session described rows but did not complete the statement")
	}
	if !w.ended {
		return w.EmptyQuery()
	}
	return nil
}

func (w *resultWriter) Describe(cols []Column) error {
	if w.extended {
		if len(cols) != len(w.cols) {
			return fmt.Errorf("pgwire: statement described %d columns, executed with %d", len(w.cols), len(cols))
		}
		return nil
	}
	if w.open {
		return fmt.Errorf("pgwire: Describe before the previous statement completed")
	}
	oids, err := columnOIDs(cols)
	if err != nil {
		return err
	}
	fields, err := fieldDescriptions(cols, make([]int16, len(cols)))
	if err != nil {
		return err
	}
	w.cols, w.oids, w.formats, w.open = cols, oids, make([]int16, len(cols)), true
	w.c.be.Send(&pgproto3.RowDescription{Fields: fields})
	return nil
}

func columnOIDs(cols []Column) ([]uint32, error) {
	oids := make([]uint32, len(cols))
	for i, c := range cols {
		oid, err := columnOID(c)
		if err != nil {
			return nil, err
		}
		oids[i] = oid
	}
	return oids, nil
}

func (w *resultWriter) WriteRow(ctx context.Context, row types.Row) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgwire: writing rows: %w", err)
	}
	if !w.open {
		return fmt.Errorf("pgwire: WriteRow before Describe")
	}
	if len(row) != len(w.cols) {
		return fmt.Errorf("pgwire: row has %d values for %d columns", len(row), len(w.cols))
	}
	if w.extended && w.maxRows > 0 && w.portal.sent >= w.maxRows {
		// The session may reuse row; the datums themselves are immutable.
		w.portal.pending = append(w.portal.pending, append(types.Row(nil), row...))
		return nil
	}
	if w.extended {
		w.portal.sent++
	}
	return w.sendRow(row)
}

// sendRow encodes row into one reused buffer and sends it as a DataRow.
func (w *resultWriter) sendRow(row types.Row) error {
	if w.buf == nil {
		// Non-nil, so an empty value slices to empty and not to NULL.
		w.buf = make([]byte, 0, 256)
	}
	buf, offs := w.buf[:0], w.offs[:0]
	for i, d := range row {
		if d == nil {
			offs = append(offs, -1, -1)
			continue
		}
		if err := checkDatum(d, w.cols[i].Type); err != nil {
			return fmt.Errorf("pgwire: column %q: %w", w.cols[i].Name, err)
		}
		start := len(buf)
		var err error
		if buf, err = appendValue(buf, d, w.cols[i].Type, w.oids[i], w.formats[i]); err != nil {
			return err
		}
		offs = append(offs, start, len(buf))
	}
	values := w.values[:0]
	for i := 0; i < len(offs); i += 2 {
		if offs[i] < 0 {
			values = append(values, nil)
		} else {
			values = append(values, buf[offs[i]:offs[i+1]])
		}
	}
	w.buf, w.offs, w.values = buf, offs, values
	w.c.be.Send(&pgproto3.DataRow{Values: values})
	return w.c.maybeFlush(len(buf) + 4*len(values) + 7)
}

func (w *resultWriter) Complete(tag string) error {
	if w.extended {
		w.portal.tag = tag // for the Execute that sends the last pending row
	}
	if !w.extended || len(w.portal.pending) == 0 {
		w.c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	}
	w.open, w.ended = false, true
	return nil
}

func (w *resultWriter) EmptyQuery() error {
	w.c.be.Send(&pgproto3.EmptyQueryResponse{})
	w.open, w.ended = false, true
	return nil
}

func (w *resultWriter) Notice(n Notice) error {
	w.c.be.Send(noticeResponse(n))
	return w.c.flush()
}

func (w *resultWriter) ParameterStatus(name, value string) error {
	w.c.be.Send(&pgproto3.ParameterStatus{Name: name, Value: value})
	return nil
}

func (w *resultWriter) CopyIn(ctx context.Context, format CopyFormat, columns int) (io.Reader, error) {
	if err := w.finishCopy(); err != nil {
		return nil, err
	}
	codes := make([]uint16, columns)
	for i := range codes {
		codes[i] = uint16(format)
	}
	w.c.be.Send(&pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: codes})
	if err := w.c.flush(); err != nil {
		return nil, err
	}
	w.copy = &copyReader{c: w.c}
	w.c.rd.unwatch() // the COPY data is the session's to read now
	w.c.rd.setBulk(true)
	return w.copy, nil
}

// finishCopy reads what is left of a COPY the session stopped reading
// although it succeeded, so the client's data is not taken for commands.
func (w *resultWriter) finishCopy() error {
	if w.copy == nil {
		return nil
	}
	r := w.copy
	w.copy = nil
	return r.drain()
}

// checkDatum catches a session bug (a datum of the wrong Go type) before it
// becomes garbage on the wire. An Unknown column carries text, as an
// untyped literal does in Postgres.
func checkDatum(d types.Datum, t types.Type) error {
	if t.ID == types.Unknown {
		if _, ok := d.(string); ok {
			return nil
		}
	}
	return types.CheckDatum(d, t)
}
