package engine

import (
	"context"
	"sync"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream"
)

// jobControl is what ALTER … SET RATE_LIMIT and ALTER … PAUSE asked of one
// job. It lives in engine memory only: a recovery's rebuilt actors get it
// again, a restart of the process forgets it.
type jobControl struct {
	rate   *int64 // nil: no limit
	paused bool
}

// controlSettings remembers every job's control settings by relation id.
type controlSettings struct {
	mu   sync.Mutex
	jobs map[uint32]jobControl
}

func (c *controlSettings) update(id uint32, f func(*jobControl)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jobs == nil {
		c.jobs = map[uint32]jobControl{}
	}
	jc := c.jobs[id]
	f(&jc)
	if jc.rate == nil && !jc.paused {
		delete(c.jobs, id)
		return
	}
	c.jobs[id] = jc
}

func (c *controlSettings) snapshot() map[uint32]jobControl {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[uint32]jobControl, len(c.jobs))
	for id, jc := range c.jobs {
		out[id] = jc
	}
	return out
}

func (c *controlSettings) forget(id uint32) {
	c.update(id, func(jc *jobControl) { *jc = jobControl{} })
}

// SetRateLimit limits the rows per second every actor of name's job lets
// in (sources and backfill); 0 pauses, nil removes the limit. It goes
// through the actors' control inbox and so takes effect at once, whatever
// the barriers are doing.
func (e *Engine) SetRateLimit(ctx context.Context, name string, rowsPerSec *int64) error {
	rel, err := e.controlTarget(name)
	if err != nil {
		return err
	}
	if rowsPerSec != nil && *rowsPerSec < 0 {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "rate limit must not be negative: %d", *rowsPerSec)
	}
	var limit *int64
	if rowsPerSec != nil {
		v := *rowsPerSec
		limit = &v
	}
	e.ctl.update(rel.ID, func(jc *jobControl) { jc.rate = limit })
	e.node.Control(actorsOf(rel), rateControl(limit))
	return nil
}

// SetPaused pauses or resumes every actor of name's job at once.
func (e *Engine) SetPaused(ctx context.Context, name string, paused bool) error {
	rel, err := e.controlTarget(name)
	if err != nil {
		return err
	}
	e.ctl.update(rel.ID, func(jc *jobControl) { jc.paused = paused })
	e.node.Control(actorsOf(rel), stream.ControlPause{Paused: paused})
	return nil
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

// reapplyControls gives rebuilt actors the settings their predecessors
// had, and forgets the settings of relations that are gone. Rebuild calls
// it after starting the actors (control reaches only started actors). A
// concurrent SetRateLimit records its setting before it sends it, and the
// snapshot here is taken after the start, so either this snapshot holds
// the setting or the send reaches the started actors.
func (e *Engine) reapplyControls(live []*catalog.Relation) {
	settings := e.ctl.snapshot()
	alive := map[uint32]bool{}
	for _, r := range live {
		alive[r.ID] = true
		if jc, ok := settings[r.ID]; ok {
			e.apply(r, jc)
		}
	}
	for id := range settings {
		if !alive[id] {
			e.ctl.forget(id)
		}
	}
}

// reapplyControl gives one newly deployed job its recorded settings.
func (e *Engine) reapplyControl(rel *catalog.Relation) {
	if jc, ok := e.ctl.snapshot()[rel.ID]; ok {
		e.apply(rel, jc)
	}
}

func (e *Engine) apply(rel *catalog.Relation, jc jobControl) {
	ids := actorsOf(rel)
	if jc.rate != nil {
		e.node.Control(ids, rateControl(jc.rate))
	}
	if jc.paused {
		e.node.Control(ids, stream.ControlPause{Paused: true})
	}
}
