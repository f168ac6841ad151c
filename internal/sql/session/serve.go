package session

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/task"
)

// Server is a pgwire server whose sessions run on one engine: what the
// playground binary, the peer-suite runner and tests start.
type Server struct {
	addr  string
	group *task.Group
	h     *Handler
}

// Serve starts serving ln with a Handler over e until Close. pcfg
// configures the protocol (users for SCRAM); cfg the sessions.
func Serve(ctx context.Context, e *engine.Engine, ln net.Listener, pcfg pgwire.Config, cfg Config) (*Server, error) {
	if pcfg.Secrets == nil { // the catalog's users log in with their passwords
		pcfg.Secrets = func(user string) (string, bool) {
			u, ok := e.Catalog().User(user)
			return u.Secret, ok && u.Secret != ""
		}
	}
	if pcfg.Superuser == nil {
		pcfg.Superuser = func(user string) bool {
			u, ok := e.Catalog().User(user)
			return !ok || u.Superuser
		}
	}
	pcfg = pcfg.WithDefaults()
	cfg.MaxConnections, cfg.ReservedConnections = pcfg.MaxConnections, pcfg.ReservedConnections
	h := NewHandler(e, cfg)
	srv, err := pgwire.NewServer(h, pcfg)
	if err != nil {
		return nil, err
	}
	h.backends = srv
	g, gctx := task.NewGroup(context.WithoutCancel(ctx))
	g.Go(gctx, "pgwire", func(ctx context.Context) error { return srv.Serve(ctx, ln) })
	return &Server{addr: ln.Addr().String(), group: g, h: h}, nil
}

// Planned counts the statements the server's sessions have planned: one
// per statement run, but one per prepared statement however often it is
// executed (plus one per re-plan after a catalog change).
func (s *Server) Planned() int64 { return s.h.planned.Load() }

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.addr }

// DSN is a connection URL for user root and database dev.
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://root@%s/dev?sslmode=disable", s.addr)
}

// Close stops accepting, ends every connection and waits for them.
func (s *Server) Close() error {
	s.group.Cancel()
	return s.group.Wait()
}

// Playground is an in-memory engine with a server in front of it, for
// tests and for running test suites file by file on fresh state.
type Playground struct {
	Engine *engine.Engine
	Server *Server
}

// StartPlayground opens an engine (in memory unless opts names a Dir or
// FS) and serves it on a free loopback port.
func StartPlayground(ctx context.Context, opts engine.Options, cfg Config) (*Playground, error) {
	if opts.Dir == "" && opts.FS == nil {
		opts.InMemory = true
	}
	if opts.BarrierInterval == 0 {
		opts.BarrierInterval = 10 * time.Millisecond
	}
	e, err := engine.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = e.Close()
		return nil, err
	}
	if cfg.Parallelism == 0 {
		cfg.Parallelism = opts.Parallelism
	}
	srv, err := Serve(ctx, e, ln, pgwire.Config{Logger: cfg.Logger}, cfg)
	if err != nil {
		_ = ln.Close()
		_ = e.Close()
		return nil, err
	}
	return &Playground{Engine: e, Server: srv}, nil
}

// Close stops the server, then the engine.
func (p *Playground) Close() error {
	serr := p.Server.Close()
	if err := p.Engine.Close(); err != nil {
		return err
	}
	return serr
}
