package pgwire

import (
	"context"
	"errors"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// A portal executed with a row limit (JDBC's fetchSize, a cursor) runs in a
// goroutine of its own that parks after each batch of rows, so a query is
// only as far ahead as the client has asked: the statement used to run to
// the end at the first Execute, keeping every row it produced in memory
// (3 GB before the client saw its first batch).
//
// The runner never touches the connection: each ResultWriter call becomes
// a portalEvent that the connection goroutine applies to its own writer,
// and the runner may send only as many rows as it was given credit for.
// With none left, it says it parked and waits for more. The session is
// used by one goroutine at a time: the connection goroutine touches it only
// while the runner is parked (or done), and before any message that runs
// the session (Query, Parse, Execute of another portal) a parked runner is
// settled: run to the end with its rows kept in the portal, as before.
type portalRun struct {
	events chan portalEvent
	credit chan int // rows the runner may send; -1: all of them
	cancel context.CancelCauseFunc
	group  *task.Group
}

type eventKind int8

const (
	evDescribe eventKind = iota
	evRow
	evComplete
	evEmpty
	evNotice
	evParamStatus
	evParked
	evDone
)

type portalEvent struct {
	kind        eventKind
	cols        []Column
	row         types.Row
	tag         string
	notice      Notice
	name, value string
	err         error
}

// startRunner starts p's statement in a runner and pumps its first limit
// rows.
func (c *conn) startRunner(ctx context.Context, p *portal, limit int) error {
	runCtx, cancel := context.WithCancelCause(ctx)
	g, gctx := task.NewGroup(runCtx)
	r := &portalRun{events: make(chan portalEvent), credit: make(chan int, 1), cancel: cancel, group: g}
	p.run = r
	w := &runnerWriter{r: r, ctx: gctx}
	g.Go(gctx, "pgwire portal", func(ctx context.Context) error {
		err := w.wait(ctx) // the first credit comes with the first Execute
		if err == nil {
			err = p.prep.stmt.Execute(ctx, p.params, w)
		}
		select {
		case r.events <- portalEvent{kind: evDone, err: err}:
		case <-ctx.Done():
		}
		return nil
	})
	return c.pumpPortal(ctx, p, limit)
}

// pumpPortal gives the runner credit for limit rows (0: all) and sends
// what it produces, until it parks (PortalSuspended) or ends.
func (c *conn) pumpPortal(ctx context.Context, p *portal, limit int) error {
	c.w.beginExtended(p, limit)
	if limit == 0 {
		limit = -1
	}
	p.run.credit <- limit
	var parked bool
	callCtx, err := c.call(ctx, func(callCtx context.Context) (err error) {
		parked, err = c.applyEvents(callCtx, p, c.w.WriteRow, c.w.Complete)
		return err
	})
	if ctx.Err() != nil {
		c.closePortal(p)
		return c.shutdown(ctx)
	}
	switch {
	case err != nil:
		return c.extendedError(callCtx, err)
	case parked:
		c.be.Send(&pgproto3.PortalSuspended{})
		return nil
	case !c.w.ended:
		return c.extendedError(callCtx, errors.New("pgwire: statement ended without a command tag"))
	}
	return nil
}

// applyEvents applies the runner's events, rows through row and the
// command tag through complete, until it parks (parked) or ends (p.run is
// then nil). A cancelled ctx stops the runner.
func (c *conn) applyEvents(ctx context.Context, p *portal, row func(context.Context, types.Row) error,
	complete func(string) error) (parked bool, err error) {
	r := p.run
	for {
		var ev portalEvent
		select {
		case ev = <-r.events:
		case <-ctx.Done():
			c.closePortal(p)
			return false, context.Canceled // errorResponse reports ctx's cause
		}
		switch ev.kind {
		case evDescribe:
			err = c.w.Describe(ev.cols)
		case evRow:
			err = row(ctx, ev.row)
		case evComplete:
			err = complete(ev.tag)
		case evEmpty:
			err = c.w.EmptyQuery()
		case evNotice:
			err = c.w.Notice(ev.notice)
		case evParamStatus:
			err = c.w.ParameterStatus(ev.name, ev.value)
		case evParked:
			return true, nil
		case evDone:
			_ = r.group.Wait()
			r.cancel(nil)
			p.run = nil
			return false, ev.err
		}
		if err != nil {
			c.closePortal(p)
			return false, err
		}
	}
}

// settlePortals runs every parked runner to its end, keeping its rows and
// tag in its portal for later Executes (resumePortal), before the session
// is used for something else.
func (c *conn) settlePortals(ctx context.Context) {
	for _, p := range c.portals {
		if p.run != nil {
			_, _ = c.call(ctx, func(callCtx context.Context) error {
				c.settle(callCtx, p)
				return nil
			})
		}
	}
}

// settle runs p's parked runner to its end (settlePortals).
func (c *conn) settle(ctx context.Context, p *portal) {
	c.w.beginExtended(p, 0)
	p.run.credit <- -1
	keep := func(_ context.Context, row types.Row) error {
		p.pending = append(p.pending, row)
		return nil
	}
	tag := func(tag string) error {
		p.tag = tag
		return nil
	}
	if _, err := c.applyEvents(ctx, p, keep, tag); err != nil {
		p.pending, p.err = nil, err
	}
}

// closePortal stops p's runner, if any, and waits for it.
func (c *conn) closePortal(p *portal) {
	if p == nil || p.run == nil {
		return
	}
	p.run.cancel(errPortalClosed)
	_ = p.run.group.Wait()
	p.run = nil
}

// closePortals closes every portal's runner.
func (c *conn) closePortals() {
	for _, p := range c.portals {
		c.closePortal(p)
	}
}

var errPortalClosed = errors.New("pgwire: portal closed")

// runnerWriter is the ResultWriter a runner gives the statement.
type runnerWriter struct {
	r      *portalRun
	ctx    context.Context
	credit int
}

func (w *runnerWriter) send(ev portalEvent) error {
	select {
	case w.r.events <- ev:
		return nil
	case <-w.ctx.Done():
		return context.Cause(w.ctx)
	}
}

func (w *runnerWriter) Describe(cols []Column) error {
	return w.send(portalEvent{kind: evDescribe, cols: cols})
}

func (w *runnerWriter) WriteRow(ctx context.Context, row types.Row) error {
	for w.credit == 0 {
		if err := w.send(portalEvent{kind: evParked}); err != nil {
			return err
		}
		if err := w.wait(ctx); err != nil {
			return err
		}
	}
	if w.credit > 0 {
		w.credit--
	}
	// The session may reuse row; the datums themselves are immutable.
	return w.send(portalEvent{kind: evRow, row: append(types.Row(nil), row...)})
}

// wait waits for the next credit; the first one comes with the start.
func (w *runnerWriter) wait(ctx context.Context) error {
	select {
	case w.credit = <-w.r.credit:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-w.ctx.Done():
		return context.Cause(w.ctx)
	}
}

func (w *runnerWriter) Complete(tag string) error {
	return w.send(portalEvent{kind: evComplete, tag: tag})
}

func (w *runnerWriter) EmptyQuery() error { return w.send(portalEvent{kind: evEmpty}) }

func (w *runnerWriter) Notice(n Notice) error {
	return w.send(portalEvent{kind: evNotice, notice: n})
}

func (w *runnerWriter) ParameterStatus(name, value string) error {
	return w.send(portalEvent{kind: evParamStatus, name: name, value: value})
}

func (w *runnerWriter) CopyIn(context.Context, CopyFormat, int) (io.Reader, error) {
	return nil, errors.New("pgwire: COPY in a portal executed with a row limit")
}
