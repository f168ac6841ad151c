package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/meta"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/session"
)

// engineConfig is what every subcommand's engine is started with; the
// defaults match the playground binary (cmd/sluice).
type engineConfig struct {
	dataDir     string // empty: a fresh temporary directory, removed at the end
	inMemory    bool
	barrier     time.Duration
	parallelism int           // 0: one actor per core
	commitDelay time.Duration // sluice --commit-delay: 0 never waits
}

// instance is an engine and its pgwire server, in this process.
type instance struct {
	cfg     engineConfig
	engine  *engine.Engine
	server  *session.Server
	dir     string
	tempDir bool
}

// startInstance opens the engine and serves it on a free loopback port.
// In memory it is session.StartPlayground; on disk it is what that does,
// with the store under a directory (StartPlayground forces memory).
func startInstance(ctx context.Context, c engineConfig, log *slog.Logger) (*instance, error) {
	opts := engine.Options{BarrierInterval: c.barrier, Parallelism: c.parallelism, Logger: log, CommitDelay: engine.CommitDelayFlag(c.commitDelay)}
	if c.inMemory {
		p, err := session.StartPlayground(ctx, opts, session.Config{Parallelism: c.parallelism, Logger: log})
		if err != nil {
			return nil, err
		}
		return &instance{cfg: c, engine: p.Engine, server: p.Server, dir: "memory"}, nil
	}
	in := &instance{cfg: c, dir: c.dataDir}
	if in.dir == "" {
		dir, err := os.MkdirTemp("", "sluice-bench-*")
		if err != nil {
			return nil, err
		}
		in.dir, in.tempDir = dir, true
	}
	opts.Dir = in.dir
	if err := in.open(ctx, opts, log); err != nil {
		in.removeDir()
		return nil, err
	}
	return in, nil
}

func (in *instance) open(ctx context.Context, opts engine.Options, log *slog.Logger) error {
	e, err := engine.Open(ctx, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = e.Close()
		return err
	}
	srv, err := session.Serve(ctx, e, ln, pgwire.Config{Logger: log}, session.Config{Parallelism: opts.Parallelism, Logger: log})
	if err != nil {
		_ = ln.Close()
		_ = e.Close()
		return err
	}
	in.engine, in.server = e, srv
	return nil
}

// Close stops the server, then the engine, and removes a temporary
// data directory.
func (in *instance) Close() error {
	err := in.server.Close()
	if eerr := in.engine.Close(); eerr != nil {
		err = errors.Join(err, eerr)
	}
	in.removeDir()
	return err
}

func (in *instance) removeDir() {
	if in.tempDir {
		_ = os.RemoveAll(in.dir)
	}
}

// connect opens a client connection using the simple query protocol, as
// psql does, so every statement is one round trip and results are text.
func (in *instance) connect(ctx context.Context) (*pgx.Conn, error) {
	return connectSimple(ctx, in.server.DSN())
}

func connectSimple(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	return conn, nil
}

// barrierStatus is the coordinator's view of barriers in flight, the
// same numbers /metrics exports (sluice_barrier_oldest_in_flight_seconds).
func (in *instance) barrierStatus(ctx context.Context) (meta.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return in.engine.Coordinator().Status(ctx)
}
