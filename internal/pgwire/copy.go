package pgwire

import (
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// copyReader is the io.Reader a session gets from CopyIn: the payloads of
// the client's CopyData messages, one after another, until CopyDone (EOF)
// or CopyFail (57014). It reads from the connection directly; the message
// loop is parked inside the session's Query or Execute call meanwhile.
type copyReader struct {
	c    *conn
	buf  []byte // unread part of the last CopyData; owned (copied)
	data []byte // backing array of buf, reused
	done bool
	err  error // io.EOF after CopyDone, or why the COPY failed
}

func (r *copyReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.done {
			return 0, r.err
		}
		r.next()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// next reads one message of the COPY sub-protocol.
func (r *copyReader) next() {
	msg, err := r.c.be.Receive()
	if err != nil {
		// The connection cannot be trusted any more: the message loop
		// ends it once the session returns.
		r.c.readErr = err
		r.fail(fmt.Errorf("pgwire: reading COPY data: %w", err))
		return
	}
	switch m := msg.(type) {
	case *pgproto3.CopyData:
		// m.Data aliases the read buffer, which the next Receive reuses.
		r.data = append(r.data[:0], m.Data...)
		r.buf = r.data
	case *pgproto3.CopyDone:
		r.fail(io.EOF)
	case *pgproto3.CopyFail:
		r.fail(sqlerr.Errorf(sqlerr.QueryCanceled, "COPY from stdin failed: %s", m.Message))
	case *pgproto3.Flush, *pgproto3.Sync:
		// Postgres ignores these during COPY IN: drivers using the
		// extended protocol may send them right after Execute.
	default:
		r.fail(sqlerr.Errorf(codeProtocolViolation, "unexpected message type %T during COPY from stdin", msg))
	}
}

// fail ends the COPY sub-protocol: what follows is messages again.
func (r *copyReader) fail(err error) {
	r.done, r.err, r.buf = true, err, nil
	r.c.rd.setBulk(false)
}

// drain discards the rest of the client's COPY data. It reports a
// CopyFail or a protocol violation, and nil at CopyDone.
// It does not watch a context: it blocks on reads, which shutdown ends
// by moving the connection's deadline.
func (r *copyReader) drain() error {
	for !r.done {
		r.buf = nil
		r.next()
	}
	if r.err == io.EOF {
		return nil
	}
	return r.err
}
