package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/task"
)

// Config configures a Server. The zero value is a trusting server with
// default limits.
type Config struct {
	// Users maps user names to passwords. When it is non-empty every
	// connection must authenticate with SCRAM-SHA-256; when it is empty
	// every connection is trusted.
	Users map[string]string
	// MaxMessageSize bounds the body of one client message (a query, a
	// Bind, a CopyData). A larger message ends the connection with 08P01.
	// Zero means DefaultMaxMessageSize.
	MaxMessageSize int
	// ServerVersion is reported as server_version; drivers parse its
	// leading number. Empty means DefaultServerVersion.
	ServerVersion string
	// Logger receives connection-level failures (protocol violations, a
	// panic in a session). Nil discards them.
	Logger *slog.Logger
	// MaxConnections bounds the sessions open at once, as Postgres's
	// max_connections; one more is refused with 53300. The last
	// ReservedConnections of them are kept for superusers. Zero means
	// DefaultMaxConnections and DefaultReservedConnections; a negative
	// ReservedConnections reserves none.
	MaxConnections      int
	ReservedConnections int
	// Superuser says whether a user may take a reserved slot. Nil: every
	// user is a superuser (Sluice has one user until roles exist).
	Superuser func(user string) bool
	// Secrets, when passwords are required (Users is non-empty), looks up
	// the SCRAMSecret of a user Users does not name (the catalog's users).
	Secrets func(user string) (secret string, ok bool)
	// TLS, when set, answers SSLRequest with a TLS handshake using its
	// certificates (sslmode=require works); nil declines it.
	TLS *tls.Config
}

// Defaults for Config fields left zero.
const (
	DefaultMaxMessageSize      = 64 << 20
	DefaultServerVersion       = "15.0 (Sluice)"
	DefaultMaxConnections      = 100
	DefaultReservedConnections = 3
)

// WithDefaults returns c with every field left zero set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.ServerVersion == "" {
		c.ServerVersion = DefaultServerVersion
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.ReservedConnections == 0 {
		c.ReservedConnections = DefaultReservedConnections
	}
	c.ReservedConnections = min(max(c.ReservedConnections, 0), c.MaxConnections-1)
	if c.Superuser == nil {
		c.Superuser = func(string) bool { return true }
	}
	return c
}

// Server accepts Postgres wire-protocol connections and hands each to a
// Session of its Handler.
type Server struct {
	handler Handler
	cfg     Config
	log     *slog.Logger
	auth    *scramVerifiers // nil when trusting everyone
	logins  loginLimiter    // failed logins by address (loginlimit.go)
	mu      struct {
		sync.Mutex
		conns map[uint32]*connHandle // by process id, for cancel requests
	}
}

// connHandle is the part of a connection that other goroutines touch: a
// cancel request for it looks up its secret and cancels its running call.
type connHandle struct {
	pid    uint32
	secret [4]byte
	backendState
	mu struct {
		sync.Mutex
		cancel context.CancelCauseFunc // of the running call; nil between calls
	}
}

// NewServer returns a server for h. It derives the SCRAM verifiers of
// cfg.Users up front, so authentication does not run PBKDF2 per login.
func NewServer(h Handler, cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	s := &Server{handler: h, cfg: cfg, log: cfg.Logger, logins: loginLimiter{now: time.Now}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Users) > 0 {
		v, err := newSCRAMVerifiers(cfg.Users)
		if err != nil {
			return nil, err
		}
		v.secrets = cfg.Secrets
		s.auth = v
	}
	s.mu.conns = make(map[uint32]*connHandle)
	return s, nil
}

// Serve accepts connections on ln until ctx is done or Accept fails, then
// cancels every connection's running statement, tells idle clients the
// server is shutting down (57P01), waits for every connection goroutine and
// returns. It closes ln. The error is nil after a shutdown through ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// Connections do not inherit ctx's cancellation directly: they are
	// cancelled with errShutdown as the cause, so the statements they are
	// running report 57P01 rather than an anonymous context error.
	connBase, cancelConns := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelConns(errShutdown)
	stop := context.AfterFunc(ctx, func() {
		cancelConns(errShutdown)
		_ = ln.Close()
	})
	defer stop()
	g, gctx := task.NewGroup(connBase)
	err := s.acceptLoop(ctx, gctx, g, ln)
	_ = ln.Close()
	cancelConns(errShutdown)
	g.Wait() // connection goroutines never fail the group; see serveConnSafely
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// acceptLoop accepts until ctx is done or the listener is closed. Any
// other failure (out of file descriptors, above all) is waited out: the
// loop backs off, up to maxAcceptBackoff, and tries again, so the
// listener serves again as soon as descriptors are freed. (It used to
// return, and the server refused every connection from then on.)
func (s *Server) acceptLoop(ctx, connCtx context.Context, g *task.Group, ln net.Listener) error {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("pgwire: accept: %w", err)
			}
			backoff = min(max(2*backoff, minAcceptBackoff), maxAcceptBackoff)
			s.log.Warn("pgwire: accept failed; retrying", "err", err, "in", backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		g.Go(connCtx, "pgwire conn", func(ctx context.Context) error {
			s.serveConnSafely(ctx, nc)
			return nil
		})
	}
}

// The accept loop's back-off after a failure, doubling from min to max.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// serveConnSafely runs one connection. A panic (a bug in a session or
// here) is logged and ends only this connection, never the server.
func (s *Server) serveConnSafely(ctx context.Context, nc net.Conn) {
	defer nc.Close()
	err := task.Run(ctx, "pgwire conn", func(ctx context.Context) error {
		return newConn(s, nc).run(ctx)
	})
	var pe *task.PanicError
	switch {
	case errors.As(err, &pe):
		s.log.Error("pgwire: panic in connection", "remote", nc.RemoteAddr(), "err", err)
	case err != nil:
		s.log.Debug("pgwire: connection ended", "remote", nc.RemoteAddr(), "err", err)
	}
}

// register allocates a unique process id and secret for a new session of
// user, or refuses it with 53300 when the connection slots open to user
// are taken.
func (s *Server) register(user string, nc net.Conn) (*connHandle, error) {
	h := &connHandle{backendState: backendState{nc: nc}}
	if _, err := rand.Read(h.secret[:]); err != nil {
		return nil, fmt.Errorf("pgwire: secret key: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch n := len(s.mu.conns); {
	case n >= s.cfg.MaxConnections:
		return nil, sqlerr.New(sqlerr.TooManyConnections, "sorry, too many clients already")
	case n >= s.cfg.MaxConnections-s.cfg.ReservedConnections && !s.cfg.Superuser(user):
		return nil, sqlerr.New(sqlerr.TooManyConnections, "remaining connection slots are reserved for roles with the SUPERUSER attribute")
	}
	for {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("pgwire: process id: %w", err)
		}
		// Keep pids positive: some clients read them as int32.
		pid := binary.BigEndian.Uint32(b[:]) & 0x7fffffff
		if _, taken := s.mu.conns[pid]; pid != 0 && !taken {
			h.pid = pid
			s.mu.conns[pid] = h
			return h, nil
		}
	}
}

func (s *Server) unregister(h *connHandle) {
	s.mu.Lock()
	delete(s.mu.conns, h.pid)
	s.mu.Unlock()
}

// cancel handles a CancelRequest: it cancels the running call of the
// connection with that pid if the secret matches. As in Postgres, nothing
// is reported back either way.
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	h := s.mu.conns[pid]
	s.mu.Unlock()
	if h == nil || subtle.ConstantTimeCompare(h.secret[:], secret) != 1 {
		s.log.Debug("pgwire: cancel request for unknown connection", "pid", pid)
		return
	}
	h.cancelCall(errCancelRequest)
}

// cancelCall cancels the connection's running call, if any, with cause.
func (h *connHandle) cancelCall(cause error) {
	h.mu.Lock()
	if h.mu.cancel != nil {
		h.mu.cancel(cause)
	}
	h.mu.Unlock()
}

// beginCall derives the context of one session call, cancellable by a
// cancel request until endCall.
func (h *connHandle) beginCall(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	h.mu.Lock()
	h.mu.cancel = cancel
	h.mu.Unlock()
	return ctx
}

func (h *connHandle) endCall() {
	h.mu.Lock()
	if h.mu.cancel != nil {
		h.mu.cancel(context.Canceled)
		h.mu.cancel = nil
	}
	h.mu.Unlock()
}
