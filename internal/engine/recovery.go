package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/meta/barrier"
	"github.com/sluice-db/sluice/internal/storage"
)

// Rebuild implements meta.Recoverer: the coordinator has stopped every
// actor and dropped uncommitted writes; finish any drop that was in
// progress, then deploy every job in the catalog again, upstream before
// downstream, and start them all.
func (e *Engine) Rebuild(ctx context.Context) ([]barrier.JobSpec, error) {
	// Deployments of new jobs and drops hold this lock while they touch
	// the compute node, so none sees the graph half torn down.
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.node.StopAll(stopCtx); err != nil {
		return nil, fmt.Errorf("stop actors: %w", err)
	}
	e.store.AbortUncommitted()
	var live []*catalog.Relation
	dropping := map[uint32]bool{}
	for _, r := range e.catalog.All() {
		for _, d := range r.DependsOn {
			// Reads a relation being dropped: it goes too (a crash came
			// between the drop's catalog writes).
			dropping[r.ID] = dropping[r.ID] || dropping[d]
		}
		if r.State == catalog.StateDropping || dropping[r.ID] {
			dropping[r.ID] = true
			if err := e.markDropping(ctx, r); err != nil {
				return nil, err
			}
			for _, a := range actorsOf(r) {
				e.store.DiscardActor(storage.ActorID(a))
			}
			if err := e.DeleteJobState(ctx, r.ID); err != nil {
				return nil, err
			}
			continue
		}
		if r.Job.Plan != nil { // a source has no job
			live = append(live, r)
		}
	}
	// A RECOVER MATERIALIZED VIEW a crash interrupted: clear its state
	// again, so the job backfills from scratch instead of running on half.
	if err := e.finishStateResets(ctx, live); err != nil {
		return nil, err
	}
	for _, r := range live {
		if _, err := e.node.Prepare(ctx, deployment(r)); err != nil {
			return nil, fmt.Errorf("rebuild %s: %w", r.Name, err)
		}
	}
	specs := make([]barrier.JobSpec, 0, len(live))
	for _, r := range live {
		if err := e.node.Start(ctx, r.ID); err != nil {
			return nil, fmt.Errorf("rebuild %s: %w", r.Name, err)
		}
		specs = append(specs, jobSpec(r))
	}
	e.reapplyControls(live)
	return specs, nil
}

func (e *Engine) markDropping(ctx context.Context, r *catalog.Relation) error {
	if r.State == catalog.StateDropping {
		return nil
	}
	r.State = catalog.StateDropping
	return e.catalog.Put(ctx, r)
}

// DeleteJobState implements meta.Recoverer: delete a dropped relation's
// state tables (and DML log), then its catalog entry. Each step is
// idempotent, so a crash in the middle is finished by the next recovery.
func (e *Engine) DeleteJobState(ctx context.Context, id uint32) error {
	rel, ok := e.catalog.ByID(id)
	if !ok {
		return nil
	}
	for _, t := range rel.Job.StateTables {
		if err := e.store.DropTableState(ctx, t); err != nil {
			return err
		}
	}
	if rel.Table.ID != 0 { // a source or sink has no table
		if err := e.store.DropTableState(ctx, rel.Table.ID); err != nil {
			return err
		}
	}
	return e.catalog.Delete(ctx, id)
}

// Recover rebuilds every actor from the last committed epoch (RECOVER).
func (e *Engine) Recover(ctx context.Context) error {
	before, err := e.coord.Status(ctx)
	if err != nil {
		return err
	}
	if err := e.coord.Recover(ctx, fmt.Errorf("RECOVER requested")); err != nil {
		return err
	}
	return e.waitRecovered(ctx, before.Recoveries+1)
}

// waitRecovered waits until n recoveries have completed.
func (e *Engine) waitRecovered(ctx context.Context, n int) error {
	for {
		st, err := e.coord.Status(ctx)
		if err != nil {
			return err
		}
		if st.Recoveries >= n {
			return nil
		}
		if err := sleepCtx(ctx); err != nil {
			return err
		}
	}
}
