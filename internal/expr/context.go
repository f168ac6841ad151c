package expr

import (
	"sync/atomic"
	"time"

	"github.com/sluice-db/sluice/internal/types"
)

// Context is what evaluation needs from its surroundings. One Context is
// shared by every Expr of a statement or a streaming job and may be used by
// several goroutines at once (the row-error counter is atomic); it must not
// be copied after first use.
type Context struct {
	// Strict makes a row error (division by zero, overflow, bad cast) fail
	// the whole evaluation with its *sqlerr.Error, as Postgres does for a
	// batch query. When false (a streaming job, which must not stop on one
	// bad row) the row's result is NULL, the error is counted and passed to
	// OnRowError, and evaluation continues.
	Strict bool
	// OnRowError, when set, sees every error swallowed in non-strict mode.
	// It may be called from several goroutines at once.
	OnRowError func(err error)
	// Now is the value of now() and current_timestamp: fixed per statement
	// (batch) or per barrier (streaming), never read from a clock here.
	Now types.DTimestamptz
	// Location is the session time zone used to convert between timestamp
	// and timestamptz and to truncate timestamptz; nil means UTC.
	Location *time.Location
	// StableRandom makes random() a hash of its row instead of a draw, so
	// that a streaming job retracts the value it inserted (see randomExpr).
	StableRandom bool
	// Session answers the session and catalog functions (session.go) in
	// a batch query; nil in a streaming job.
	Session Session
	// Outer is the row of the enclosing query a correlated subquery is
	// evaluated for (KindOuter reads it); nil elsewhere.
	Outer types.Row

	rowErrors atomic.Uint64
}

// NewStrictContext returns a strict context with the given now().
func NewStrictContext(now types.DTimestamptz) *Context {
	return &Context{Strict: true, Now: now}
}

// WithOuter returns a context like c for evaluating a correlated
// subquery for the outer row outer (KindOuter reads it), with its own
// row-error count.
func (c *Context) WithOuter(outer types.Row) *Context {
	return &Context{Strict: c.Strict, OnRowError: c.OnRowError, Now: c.Now, Location: c.Location,
		StableRandom: c.StableRandom, Session: c.Session, Outer: outer}
}

// RowErrors returns the number of row errors swallowed so far in
// non-strict mode.
func (c *Context) RowErrors() uint64 { return c.rowErrors.Load() }

// loc returns the session time zone.
func (c *Context) loc() *time.Location {
	if c == nil || c.Location == nil {
		return time.UTC
	}
	return c.Location
}

// rowError decides what a failed row becomes. It returns nil when the row
// should simply be NULL: the row is invisible (its value is never looked
// at, so its error must not fail the query — this is what lets CASE guard a
// division) or the context is non-strict (the error is then counted).
// Otherwise it returns err, which aborts the evaluation.
func (s *evalState) rowError(i int, err error) error {
	if !s.chunk.Visible(i) {
		return nil
	}
	if s.ctx == nil || s.ctx.Strict {
		return err
	}
	s.ctx.rowErrors.Add(1)
	if s.ctx.OnRowError != nil {
		s.ctx.OnRowError(err)
	}
	return nil
}

// evalState is one evaluation over one chunk: the context and the chunk
// whose visibility decides which row errors matter.
type evalState struct {
	ctx   *Context
	chunk *types.Chunk
}

// RowError decides what one row's failed value becomes outside an
// expression (a window function's): with a strict (or no) context the
// error, to fail the statement; otherwise nil, the value is NULL and the
// error is counted.
func (c *Context) RowError(err error) error {
	if c == nil || c.Strict {
		return err
	}
	c.rowErrors.Add(1)
	if c.OnRowError != nil {
		c.OnRowError(err)
	}
	return nil
}
