package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// flushThreshold is how many bytes of rows may wait in the write buffer
// before they are sent, so a large result streams instead of piling up.
const flushThreshold = 32 << 10

// shutdownWriteGrace bounds the final FATAL write to a client at shutdown.
const shutdownWriteGrace = 100 * time.Millisecond

// conn is one client connection. Its fields are owned by the connection's
// goroutine; only handle is shared (with cancel requests).
type conn struct {
	srv    *Server
	raw    net.Conn   // the socket
	nc     net.Conn   // what the protocol runs over: raw, or TLS over it
	rd     connReader // the Backend's reader: see connread.go
	be     *pgproto3.Backend
	handle *connHandle
	sess   Session
	w      resultWriter

	stmts          map[string]*prepared
	portals        map[string]*portal
	ignoreTillSync bool  // an extended-protocol error skips messages until Sync
	unflushed      int   // bytes of rows sent since the last flush
	readErr        error // a read failed inside a session call (COPY)
	tlsDone        bool  // the connection was upgraded to TLS
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:     s,
		nc:      nc,
		stmts:   make(map[string]*prepared),
		portals: make(map[string]*portal),
	}
	c.raw = nc
	c.useConn(nc)
	c.w.c = c
	return c
}

// useConn makes nc the connection's transport (again after a TLS upgrade).
func (c *conn) useConn(nc net.Conn) {
	c.nc = nc
	c.rd = connReader{r: nc, nc: nc}
	c.be = pgproto3.NewBackend(&c.rd, nc)
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageSize)
}

// run serves the connection until the client leaves, a fatal error, or
// ctx is done. Network I/O does not watch ctx, so on cancellation the read
// deadline moves to now and the write deadline to a short grace: enough to
// tell the client why, not enough for a stuck client to hold shutdown.
func (c *conn) run(ctx context.Context) error {
	raw := c.raw // a TLS upgrade replaces c.nc; deadlines on raw reach it too
	stop := context.AfterFunc(ctx, func() {
		_ = raw.SetReadDeadline(time.Now())
		_ = raw.SetWriteDeadline(time.Now().Add(shutdownWriteGrace))
	})
	defer stop()
	p, err := c.startup(ctx)
	if err != nil || p == nil {
		return err
	}
	defer c.srv.unregister(c.handle)
	sess, err := c.srv.handler.NewSession(ctx, *p)
	if err != nil {
		return c.fatal(ctx, err)
	}
	c.sess = sess
	defer sess.Close()
	defer c.closePortals() // before the session closes
	if err := c.sendWelcome(p); err != nil {
		return err
	}
	return c.loop(ctx)
}

// loop reads and dispatches messages until Terminate or a fatal error.
func (c *conn) loop(ctx context.Context) error {
	for {
		msg, err := c.receive()
		if err != nil {
			return c.receiveFailed(ctx, err)
		}
		if _, isSync := msg.(*pgproto3.Sync); c.ignoreTillSync && !isSync {
			continue
		}
		if _, ok := msg.(*pgproto3.Terminate); ok {
			return nil
		}
		if err := c.dispatch(ctx, msg); err != nil {
			return err
		}
		if c.readErr != nil {
			return c.receiveFailed(ctx, c.readErr)
		}
	}
}

// dispatch hands one message to its handler. A returned error ends the
// connection; SQL errors are reported to the client by the handlers.
func (c *conn) dispatch(ctx context.Context, msg pgproto3.FrontendMessage) error {
	switch m := msg.(type) {
	case *pgproto3.Query, *pgproto3.Parse, *pgproto3.FunctionCall:
		c.settlePortals(ctx) // the session is about to run something else
	case *pgproto3.Execute:
		if p := c.portals[m.Portal]; p == nil || p.run == nil {
			c.settlePortals(ctx)
		}
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		return c.handleQuery(ctx, m)
	case *pgproto3.Parse:
		return c.handleParse(ctx, m)
	case *pgproto3.Bind:
		return c.handleBind(ctx, m)
	case *pgproto3.Describe:
		return c.handleDescribe(ctx, m)
	case *pgproto3.Execute:
		return c.handleExecute(ctx, m)
	case *pgproto3.Sync:
		return c.handleSync()
	case *pgproto3.Flush:
		return c.flush()
	case *pgproto3.Close:
		return c.handleClose(m)
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Postgres ignores these outside COPY: they are the rest of the
		// data of a COPY that already failed.
		return nil
	case *pgproto3.FunctionCall:
		return c.extendedError(ctx, sqlerr.New(codeFeatureNotSupported, "function call messages are not supported"))
	}
	return c.fatal(ctx, sqlerr.Errorf(codeProtocolViolation, "unexpected message %T", msg))
}

// errIdleInTransaction is receive's error when a session sat idle in a
// transaction block for longer than it allows.
var errIdleInTransaction = errors.New("pgwire: idle in transaction too long")

// receive reads the next message. A connection being terminated reads
// none; inside a transaction block a session's idle limit
// (IdleInTransactionLimiter) bounds the wait.
func (c *conn) receive() (pgproto3.FrontendMessage, error) {
	var limit time.Duration
	if l, ok := c.sess.(IdleInTransactionLimiter); ok && c.txStatus() != TxIdle {
		limit = l.IdleInTransactionTimeout()
	}
	if limit > 0 {
		_ = c.nc.SetReadDeadline(time.Now().Add(limit))
	}
	if c.handle.terminated.Load() { // after the deadline: TerminateBackend sets it before its own
		return nil, errTerminated
	}
	msg, err := c.be.Receive()
	if limit > 0 {
		_ = c.nc.SetReadDeadline(time.Time{})
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && !c.handle.terminated.Load() {
			return nil, errIdleInTransaction
		}
	}
	return msg, err
}

// receiveFailed turns a read error into the end of the connection: quietly
// when the client left, with FATAL 57P01 at shutdown, and with FATAL 08P01
// for a malformed or oversized message.
func (c *conn) receiveFailed(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return c.shutdown(ctx)
	case c.handle.terminated.Load():
		return c.fatal(ctx, sqlerr.New(sqlerr.AdminShutdown, msgTerminatedByAdmin))
	case errors.Is(err, errIdleInTransaction):
		return c.fatal(ctx, sqlerr.New(sqlerr.IdleInTransactionTimeout,
			"terminating connection due to idle-in-transaction timeout"))
	case isDisconnect(err):
		return nil
	}
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooBig) {
		return c.fatal(ctx, sqlerr.Errorf(codeProtocolViolation,
			"message of %d bytes exceeds the limit of %d bytes", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen))
	}
	return c.fatal(ctx, sqlerr.Errorf(codeProtocolViolation, "invalid message: %v", err))
}

// shutdown ends the connection when the server stops: whatever the
// session was doing was cancelled, and Postgres reports that as FATAL.
func (c *conn) shutdown(ctx context.Context) error {
	return c.fatal(ctx, sqlerr.New(sqlerr.AdminShutdown, msgTerminatedByAdmin))
}

// isDisconnect reports a read error that means the client went away.
func isDisconnect(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, syscall.ECONNRESET)
}

// fatal sends err as a FATAL ErrorResponse and returns it, ending the
// connection.
func (c *conn) fatal(ctx context.Context, err error) error {
	c.be.Send(errorResponse(ctx, err, severityFatal))
	if ferr := c.be.Flush(); ferr != nil {
		return fmt.Errorf("pgwire: sending fatal error: %w", ferr)
	}
	return err
}

// sendError reports a statement's error and keeps the connection.
func (c *conn) sendError(ctx context.Context, err error) {
	c.be.Send(errorResponse(ctx, err, severityError))
}

// extendedError reports an error in the extended protocol: the client has
// likely pipelined more messages of the failed batch, and Postgres skips
// them all until Sync.
func (c *conn) extendedError(ctx context.Context, err error) error {
	c.sendError(ctx, err)
	c.ignoreTillSync = true
	return nil
}

func (c *conn) flush() error {
	c.unflushed = 0
	if err := c.be.Flush(); err != nil {
		return fmt.Errorf("pgwire: write: %w", err)
	}
	return nil
}

// maybeFlush sends buffered rows once enough have piled up.
func (c *conn) maybeFlush(n int) error {
	c.unflushed += n
	if c.unflushed < flushThreshold {
		return nil
	}
	return c.flush()
}

func (c *conn) txStatus() TxStatus {
	if r, ok := c.sess.(TxStatusReporter); ok {
		return r.TxStatus()
	}
	return TxIdle
}

// readyForQuery ends a cycle: portals die with the implicit transaction
// (Postgres drops them at commit), and the client may send again.
func (c *conn) readyForQuery() error {
	st := c.txStatus()
	if st == TxIdle {
		c.closePortals()
		clear(c.portals)
	}
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: byte(st)})
	return c.flush()
}

// call runs fn with a context that a cancel request for this connection
// cancels, and so does the client closing the connection (see watch).
func (c *conn) call(ctx context.Context, fn func(ctx context.Context) error) (context.Context, error) {
	callCtx := c.handle.beginCall(ctx)
	defer c.handle.endCall()
	c.rd.watch(ctx, func() { c.handle.cancelCall(errClientGone) })
	defer c.rd.unwatch()
	err := fn(callCtx)
	// Keep the cause for the error report: endCall replaces nothing once
	// the context was cancelled, so callCtx's cause survives.
	return callCtx, err
}

func (c *conn) handleQuery(ctx context.Context, m *pgproto3.Query) error {
	delete(c.stmts, "")
	c.closePortal(c.portals[""])
	delete(c.portals, "")
	c.w.beginSimple()
	callCtx, err := c.call(ctx, func(ctx context.Context) error {
		return c.sess.Query(ctx, m.String, &c.w)
	})
	if err == nil {
		err = c.w.endSimple()
	}
	if err == nil {
		err = c.w.finishCopy()
	}
	if ctx.Err() != nil {
		return c.shutdown(ctx)
	}
	if err != nil {
		c.sendError(callCtx, err)
	}
	return c.readyForQuery()
}
