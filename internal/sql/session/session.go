package session

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/runtimecfg"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Config configures a Handler.
type Config struct {
	// ChunkSize is the batch executor's rows per chunk (0: default).
	ChunkSize int
	// ServerVersion is what version() and SHOW server_version report
	// (default pgwire.DefaultServerVersion).
	ServerVersion string
	// Clock returns now() for each statement (default time.Now).
	Clock  func() time.Time
	Logger *slog.Logger
	// Parallelism is what EXPLAIN assumes for distributed fragments; set
	// it to the engine's (default: the number of cores).
	Parallelism int
	// MaxConnections and ReservedConnections are what SHOW reports of
	// the server's connection limits (Serve copies them from its
	// pgwire.Config; zero: pgwire's defaults).
	MaxConnections, ReservedConnections int
	// QueryMemoryLimit is query_memory_limit's default in bytes (0: a
	// quarter of the machine's memory, at most QueryPool's size).
	QueryMemoryLimit int64
	// QueryPool is the memory the queries running at once share (nil: a
	// pool of half the machine's memory).
	QueryPool *batch.MemoryPool
}

// Handler is a pgwire.Handler serving SQL over one engine.
type Handler struct {
	e   *engine.Engine
	cfg Config
	// planned counts plans made (Server.Planned).
	planned atomic.Int64
	// acts is every session's pg_stat_activity row (activity.go).
	acts activities
	// backends cancels and terminates connections by pid (the pgwire
	// server, set by Serve; nil: pg_cancel_backend finds none).
	backends BackendSignaler
	// started is when the handler started (pg_postmaster_start_time).
	started time.Time
}

// BackendSignaler cancels a connection's statement or ends the connection,
// by process id, reporting whether there is one (pgwire.Server).
type BackendSignaler interface {
	CancelBackend(pid uint32) bool
	TerminateBackend(pid uint32) bool
}

// NewHandler returns a handler whose sessions run statements on e.
func NewHandler(e *engine.Engine, cfg Config) *Handler {
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = pgwire.DefaultServerVersion
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = runtime.NumCPU()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.QueryPool == nil {
		cfg.QueryPool = DefaultQueryPool()
	}
	if cfg.QueryMemoryLimit <= 0 {
		cfg.QueryMemoryLimit = min(runtimecfg.MachineMemory()/4, cfg.QueryPool.Limit())
	}
	if cfg.MaxConnections <= 0 {
		d := pgwire.Config{}.WithDefaults()
		cfg.MaxConnections, cfg.ReservedConnections = d.MaxConnections, d.ReservedConnections
	}
	return &Handler{e: e, cfg: cfg, started: time.Now()}
}

// NewSession implements pgwire.Handler. Every database name is accepted:
// Sluice has one namespace, and RisingWave scripts connect to "dev".
func (h *Handler) NewSession(_ context.Context, p pgwire.StartupParams) (pgwire.Session, error) {
	s := &Session{h: h, e: h.e, p: planner.New(h.e.Catalog(), h.e), user: p.User, db: p.Database, pid: p.ProcessID,
		written: engine.Written{}, notices: &engine.NoticeQueue{}}
	startup := map[string]string{}
	for k, v := range p.Settings {
		if _, ok := knownVars()[k]; ok {
			startup[k] = v
		}
	}
	if p.ApplicationName != "" {
		startup["application_name"] = p.ApplicationName
	}
	s.vars = newVars(startup)
	now := h.cfg.Clock()
	s.act = &activity{pid: p.ProcessID, user: p.User, db: p.Database, app: p.ApplicationName,
		backendStart: now, state: "idle", stateChange: now}
	if tcp, ok := p.RemoteAddr.(*net.TCPAddr); ok {
		s.act.client = tcp.IP.String()
	}
	h.acts.add(s.act)
	s.vars.specs["max_connections"].def = strconv.Itoa(h.cfg.MaxConnections)
	s.vars.specs["superuser_reserved_connections"].def = strconv.Itoa(h.cfg.ReservedConnections)
	s.vars.specs["query_memory_limit"].def = formatMemory(h.cfg.QueryMemoryLimit)
	return s, nil
}

// Session is one connection's SQL state: its settings and whether it is
// inside a BEGIN block. pgwire calls it from one goroutine at a time.
type Session struct {
	h    *Handler
	e    *engine.Engine
	p    *planner.Planner
	vars *vars
	user string
	db   string
	pid  uint32
	act  *activity // this session's pg_stat_activity row
	// tx is the open transaction block (BEGIN … COMMIT), nil outside one
	// (txn.go).
	tx *txn
	// written is where this session's writes are in the tables' logs; a
	// SELECT of a view waits until the committed epoch covers them.
	written engine.Written
	// named holds the statements of SQL PREPARE, by name
	// (sqlprepare.go).
	named map[string]*prepared
	// notices are the amplification guard's about jobs this session
	// created (guard.go).
	notices *engine.NoticeQueue
}

var _ pgwire.Session = (*Session)(nil)
var _ pgwire.TxStatusReporter = (*Session)(nil)

// TxStatus implements pgwire.TxStatusReporter.
func (s *Session) TxStatus() pgwire.TxStatus {
	switch {
	case s.tx == nil:
	case s.tx.failed:
		return pgwire.TxFailed
	default:
		return pgwire.TxInBlock
	}
	return pgwire.TxIdle
}

// Close implements pgwire.Session: a transaction block still open when the
// connection goes is rolled back.
func (s *Session) Close() {
	s.e.ForgetNotices(s.notices)
	s.rollbackBlock()
	s.h.acts.remove(s.pid)
}

// Query implements pgwire.Session: it runs each statement of sql in turn.
func (s *Session) Query(ctx context.Context, sql string, w pgwire.ResultWriter) error {
	s.act.begin(sql, s.h.cfg.Clock())
	defer s.endActivity()
	if err := s.writeNotices(w); err != nil {
		return err
	}
	sts, err := parser.ParseWithin(ctx, sql, s.memoryLimit())
	if err != nil {
		s.failBlock()
		return canceled(ctx, err)
	}
	if len(sts) == 0 {
		return w.EmptyQuery()
	}
	for i := range sts {
		if err := s.run(ctx, &sts[i], w); err != nil {
			return err
		}
	}
	return nil
}

// endActivity records in pg_stat_activity that the session is idle.
func (s *Session) endActivity() {
	s.act.end(s.tx != nil, s.tx != nil && s.tx.failed, s.h.cfg.Clock())
}

// signalBackend runs pg_cancel_backend or pg_terminate_backend on pid.
func (s *Session) signalBackend(fn string, pid uint32) bool {
	if s.h.backends == nil {
		return false
	}
	if fn == "pg_terminate_backend" {
		return s.h.backends.TerminateBackend(pid)
	}
	return s.h.backends.CancelBackend(pid)
}

// IdleInTransactionTimeout implements pgwire.IdleInTransactionLimiter.
func (s *Session) IdleInTransactionTimeout() time.Duration {
	_, v, _ := s.vars.get("idle_in_transaction_session_timeout")
	ms, _ := strconv.Atoi(v)
	return time.Duration(ms) * time.Millisecond
}

// run executes one statement under the session's statement_timeout and
// turns a cancellation into 57014.
func (s *Session) run(ctx context.Context, st *parser.Statement, w pgwire.ResultWriter) error {
	return s.runAs(ctx, st, func(ctx context.Context) error { return s.execute(ctx, st, w) })
}

// runAs is run with exec executing st (a prepared statement's bound plan).
func (s *Session) runAs(ctx context.Context, st *parser.Statement, exec func(context.Context) error) error {
	_, tv, _ := s.vars.get("statement_timeout")
	if ms, _ := strconv.Atoi(tv); ms > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, time.Duration(ms)*time.Millisecond,
			sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout"))
		defer cancel()
	}
	if err := s.refuseInFailedBlock(st); err != nil {
		return err
	}
	err := exec(ctx)
	if err != nil {
		s.failBlock()
	}
	return canceled(ctx, err)
}

// canceled turns err, when ctx is done, into the error that says why: the
// cancellation's own SQL error (statement timeout) or 57014.
func canceled(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if e, ok := sqlerr.As(err); ok && e.Code == sqlerr.QueryCanceled && e.Detail != "" {
		return e // already says why, and what it waited for (a stalled store)
	}
	if cause, ok := sqlerr.As(context.Cause(ctx)); ok {
		return cause
	}
	if _, ok := sqlerr.As(err); !ok || errors.Is(err, context.Canceled) {
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	return err
}

// now is the statement's now().
func (s *Session) now() types.DTimestamptz {
	return types.TimestamptzFromTime(s.h.cfg.Clock())
}
