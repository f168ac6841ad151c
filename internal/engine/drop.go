package engine

import (
	"context"
	"errors"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/stream"
)

// Drop drops a relation at once, whatever its barriers are doing. Without
// cascade it refuses (2BP01) when other relations read it.
func (e *Engine) Drop(ctx context.Context, name string, cascade bool) (err error) {
	defer e.ddl.observe("drop", time.Now(), &err)
	closure, err := e.dropTargets(name, cascade)
	if err != nil {
		return err
	}
	return e.dropRelations(ctx, closure)
}

// markAndTearDown marks rels dropping, durably, and stops their actors.
// It does not wait for the actors' goroutines to exit: the returned wait
// does (the caller runs it in the background).
func (e *Engine) markAndTearDown(ctx context.Context, rels []*catalog.Relation) (map[uint32][]stream.ActorID, func(context.Context) error, error) {
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	for i := len(rels) - 1; i >= 0; i-- {
		rels[i].State = catalog.StateDropping
		if err := e.catalog.Put(ctx, rels[i]); err != nil {
			return nil, nil, err
		}
	}
	var ids []uint32
	jobs := map[uint32][]stream.ActorID{}
	for _, r := range rels {
		if r.Job.Plan == nil {
			continue // a source: no job
		}
		ids = append(ids, r.ID)
		jobs[r.ID] = actorsOf(r)
	}
	return jobs, e.node.StopJobs(ids), nil
}

// awaitExit waits in the background for a dropped job's goroutines to
// exit; they were cancelled, and their writes are fenced off in the store
// once the coordinator has discarded them, so the DROP need not wait.
func (e *Engine) awaitExit(wait func(context.Context) error) {
	e.group.Go(e.trunc.ctx, "drop-await-exit", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := wait(ctx); err != nil && !errors.Is(err, context.Canceled) {
			e.log.Error("dropped job's actors did not exit", "err", err)
		}
		return nil
	})
}

// dropRelations is the immediate drop: catalog first and durable, then
// teardown on the compute node, then barrier bookkeeping; state deletion
// follows in the background.
func (e *Engine) dropRelations(ctx context.Context, rels []*catalog.Relation) error {
	// Dependents first: a crash between two of these writes leaves a
	// relation dropping only if everything reading it is dropping too.
	// Under deployMu, so a recovery either rebuilds the jobs before the
	// marks (and they are torn down below) or sees them and skips them.
	// The coordinator is told after the lock is released: it may be
	// waiting for the lock in a recovery.
	jobs, wait, err := e.markAndTearDown(ctx, rels)
	if err != nil {
		return err
	}
	e.awaitExit(wait)
	for _, r := range rels {
		e.creates.cancel(r.ID)
		e.forgetJob(ctx, r.ID, r.Name)
	}
	if err := e.coord.DropJobs(ctx, jobs); err != nil {
		// The coordinator did not know some job (it was dropped during a
		// recovery, or never registered): finish its cleanup here.
		for _, r := range rels {
			if derr := e.DeleteJobState(ctx, r.ID); derr != nil {
				return derr
			}
		}
	}
	// A source has no state: it goes once what reads it is dropping.
	for _, r := range rels {
		if r.Kind == catalog.KindSource {
			if err := e.DeleteJobState(ctx, r.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
