package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream"
)

// DropGraceful is DROP … GRACEFUL, the barrier-carried variant of Drop
// for jobs that must flush a final epoch (sinks): the relations are marked
// dropping in the catalog, durably, as for an immediate drop; then a
// barrier carrying Stop for their jobs is injected and the call waits until
// its epoch commits, by which time every actor of the jobs has passed it,
// staged its last writes (committed with that epoch) and exited. Only then
// are the jobs torn down and their state deleted, the same way Drop does.
//
// The wait is as long as the barrier takes: behind a stalled join, until
// the statement is cancelled. Cancellation (Ctrl-C, statement_timeout)
// returns 57014, and the drop is finished at once by the immediate path
// before returning, so the relations are gone either way; a crash at any
// point is finished by recovery, which drops every relation marked
// dropping. Jobs still being created have no final epoch to flush and are
// dropped at once.
func (e *Engine) DropGraceful(ctx context.Context, name string, cascade bool) (err error) {
	defer e.ddl.observe("drop_graceful", time.Now(), &err)
	rels, err := e.dropTargets(name, cascade)
	if err != nil {
		return err
	}
	for _, r := range rels {
		if r.State != catalog.StateCreated {
			return e.dropRelations(ctx, rels)
		}
	}
	if err := e.markDroppingAll(ctx, rels); err != nil {
		return err
	}
	waitErr := e.stopAndWait(ctx, rels)
	// From here the drop finishes whatever happened: the stop committed,
	// the wait was cancelled, or a recovery replaced the graph. A
	// cancelled statement's context cannot be used for that.
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := e.finishDrop(finishCtx, rels); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return cancelled(ctx)
	}
	if waitErr != nil {
		// Not running (a recovery is rebuilding the graph, or the job was
		// never registered): the immediate path finished it instead.
		e.log.Info("graceful drop finished immediately", "relation", name, "err", waitErr)
	}
	return nil
}

// dropTargets is the relation name names and, with cascade, everything
// built on it; without cascade it refuses (2BP01) when others read it.
func (e *Engine) dropTargets(name string, cascade bool) ([]*catalog.Relation, error) {
	rel, ok := e.catalog.ByName(name)
	if !ok {
		return nil, sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	closure := e.catalog.Closure(rel.ID)
	if len(closure) > 1 && !cascade {
		names := make([]string, 0, len(closure)-1)
		for _, d := range closure[1:] {
			names = append(names, d.Name)
		}
		err := sqlerr.Errorf(sqlerr.DependentObjectsStillExist, "cannot drop %s %s because other objects depend on it", rel.Kind, rel.Name)
		err.Detail = fmt.Sprintf("%s depend(s) on %s", strings.Join(names, ", "), rel.Name)
		err.Hint = "Use DROP ... CASCADE to drop the dependent objects too."
		return nil, err
	}
	return closure, nil
}

// markDroppingAll marks rels dropping, dependents first (a crash between
// two writes leaves a relation dropping only if everything reading it is
// dropping too), under deployMu so that a recovery either rebuilt the jobs
// before the marks or sees them and finishes the drop.
func (e *Engine) markDroppingAll(ctx context.Context, rels []*catalog.Relation) error {
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	for i := len(rels) - 1; i >= 0; i-- {
		_, err := e.catalog.Update(ctx, rels[i].ID, func(r *catalog.Relation) error {
			r.State = catalog.StateDropping
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// stopAndWait injects the Stop barrier for rels' jobs and waits for its
// epoch to commit.
func (e *Engine) stopAndWait(ctx context.Context, rels []*catalog.Relation) error {
	ids := make([]uint32, len(rels))
	for i, r := range rels {
		ids[i] = r.ID
	}
	ep, err := e.coord.StopJobs(ctx, ids)
	if err != nil {
		return err
	}
	return e.store.WaitCommitted(ctx, ep)
}

// finishDrop is the immediate drop of relations already marked dropping:
// teardown on the compute node, then barrier bookkeeping, which deletes
// their state. Relations a recovery finished meanwhile are skipped, never
// written back. Every step is idempotent.
func (e *Engine) finishDrop(ctx context.Context, rels []*catalog.Relation) error {
	live, jobs, err := e.tearDownRemaining(ctx, rels)
	if err != nil {
		return err
	}
	if err := e.coord.DropJobs(ctx, jobs); err != nil {
		for _, r := range live {
			if derr := e.DeleteJobState(ctx, r.ID); derr != nil {
				return errors.Join(err, derr)
			}
		}
	}
	return nil
}

func (e *Engine) tearDownRemaining(ctx context.Context, rels []*catalog.Relation) ([]*catalog.Relation, map[uint32][]stream.ActorID, error) {
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	var live []*catalog.Relation
	jobs := map[uint32][]stream.ActorID{}
	ids := make([]uint32, 0, len(rels))
	for _, r := range rels {
		cur, ok := e.catalog.ByID(r.ID)
		if !ok {
			continue
		}
		live = append(live, cur)
		jobs[cur.ID] = actorsOf(cur)
		ids = append(ids, cur.ID)
	}
	return live, jobs, e.node.DropJobs(ctx, ids)
}
