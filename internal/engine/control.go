package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream"
)

// controlSettings serializes ALTER … SET RATE_LIMIT / PAUSE / RESUME. The
// settings themselves live in the catalog (catalog.JobControl), so they
// survive a restart and a recovery; the lock keeps two ALTERs of one job
// from recording one setting and sending the other.
type controlSettings struct {
	mu sync.Mutex
}

// SetRateLimit limits the rows per second every actor of name's job lets
// in (sources and backfill); 0 pauses, nil removes the limit. The setting
// is recorded durably first, then sent through the actors' control inbox,
// so it takes effect at once, whatever the barriers are doing.
func (e *Engine) SetRateLimit(ctx context.Context, name string, rowsPerSec *int64) (err error) {
	defer e.ddl.observe("set_rate_limit", time.Now(), &err)
	if rowsPerSec != nil && *rowsPerSec < 0 {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "rate limit must not be negative: %d", *rowsPerSec)
	}
	var limit *int64
	if rowsPerSec != nil {
		v := *rowsPerSec
		limit = &v
	}
	return e.setControl(ctx, name, func(jc *catalog.JobControl) { jc.RateLimit = limit },
		rateControl(limit))
}

// SetPaused pauses or resumes every actor of name's job at once, durably.
func (e *Engine) SetPaused(ctx context.Context, name string, paused bool) (err error) {
	defer e.ddl.observe("set_paused", time.Now(), &err)
	return e.setControl(ctx, name, func(jc *catalog.JobControl) { jc.Paused = paused },
		stream.ControlPause{Paused: paused})
}

// setControl records a change of name's JobControl in the catalog and then
// sends c to the job's actors. Recording first is what makes it durable:
// the ALTER is acknowledged only after the catalog write is synced. A
// recovery racing with it is covered either way: Rebuild reads the
// catalog after starting the new actors, so it either sees this change or
// this send, coming after the write, reaches the started actors.
func (e *Engine) setControl(ctx context.Context, name string, change func(*catalog.JobControl), c stream.Control) error {
	return e.setControlWith(ctx, name, change, func(rel *catalog.Relation) { e.node.Control(actorsOf(rel), c) })
}

// setControlWith is setControl that tells the actors with tell.
func (e *Engine) setControlWith(ctx context.Context, name string, change func(*catalog.JobControl), tell func(*catalog.Relation)) error {
	rel, err := e.controlTarget(name)
	if err != nil {
		return err
	}
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	rel, err = e.catalog.Update(ctx, rel.ID, func(r *catalog.Relation) error {
		if r.State == catalog.StateDropping {
			return catalog.ErrNotFound
		}
		change(&r.Job.Control)
		return nil
	})
	if errors.Is(err, catalog.ErrNotFound) {
		return sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	if err != nil {
		return err
	}
	tell(rel)
	return nil
}

// SetAmplification sets the amplification guard of name's job (guard.go):
// its limit (0: none) and action. The joins read the limit live, so it
// takes effect on the next output chunk, also while a barrier is stuck.
func (e *Engine) SetAmplification(ctx context.Context, name string, limit int64, action string) (err error) {
	defer e.ddl.observe("set_amplification", time.Now(), &err)
	if err := checkAmpSettings(limit, action); err != nil {
		return err
	}
	return e.setControlWith(ctx, name, func(jc *catalog.JobControl) { jc.AmpLimit, jc.AmpAction = limit, action },
		func(rel *catalog.Relation) { e.node.SetAmpLimit(rel.ID, limit) })
}

func (e *Engine) controlTarget(name string) (*catalog.Relation, error) {
	rel, ok := e.catalog.ByName(name)
	if !ok || rel.State == catalog.StateDropping {
		return nil, sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	if rel.Job.Plan == nil {
		return nil, sqlerr.Errorf(sqlerr.WrongObjectType, "%q has no streaming job", name)
	}
	return rel, nil
}

func rateControl(limit *int64) stream.ControlRateLimit {
	if limit == nil {
		return stream.ControlRateLimit{RowsPerSec: -1}
	}
	return stream.ControlRateLimit{RowsPerSec: *limit}
}

// reapplyControls gives rebuilt actors the settings recorded for their
// jobs. Rebuild calls it after starting the actors (control reaches only
// started actors) and before it returns the jobs to the coordinator, so
// before any barrier reaches them: no source has emitted a row and no
// backfill has scanned one, and a paused job stays paused. live is read
// from the catalog again here, not taken from before the start, for the
// reason setControl gives.
func (e *Engine) reapplyControls(live []*catalog.Relation) {
	for _, r := range live {
		if cur, ok := e.catalog.ByID(r.ID); ok {
			e.apply(cur)
		}
	}
}

// reapplyControl gives one newly deployed job its recorded settings (the
// CREATE's backfill_rate_limit, or an ALTER that came first).
func (e *Engine) reapplyControl(rel *catalog.Relation) {
	if cur, ok := e.catalog.ByID(rel.ID); ok {
		e.apply(cur)
	}
}

func (e *Engine) apply(rel *catalog.Relation) {
	jc := rel.Job.Control
	if rel.Job.Plan == nil {
		return
	}
	e.node.SetAmpLimit(rel.ID, jc.AmpLimit)
	if jc.RateLimit == nil && !jc.Paused {
		return
	}
	ids := actorsOf(rel)
	if jc.RateLimit != nil {
		e.node.Control(ids, rateControl(jc.RateLimit))
	}
	if jc.Paused {
		e.node.Control(ids, stream.ControlPause{Paused: true})
	}
}
