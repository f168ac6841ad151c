package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/meta/barrier"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
)

// RecoverJob is RECOVER MATERIALIZED VIEW name: it rebuilds that view's job
// and, since they consumed its change stream, every view built on it,
// without touching any other job (no recovery, no other actor restarted).
//
// Why a rebuild from the inputs and not a restart from the last committed
// epoch: the view's committed state is as of that epoch, but its upstream
// keeps running and Sluice keeps no replayable change log for views, so a
// restarted job would miss every change between that epoch and its
// restart. Instead its state is cleared and it is backfilled from its
// inputs' committed snapshots while receiving their live changes, exactly
// as CREATE does; its dependents likewise, in dependency order. The views
// keep their catalog ids and names; their actors get new ids.
//
// Step by step: tear the jobs' actors down at once (detach upstream
// outputs, cancel, wait, as a drop does), discard their uncommitted writes,
// clear their state tables (behind a durable marker, so that a crash in
// the middle clears them again at recovery instead of leaving half a
// state), give them new actors, deploy and start them, take the old actors
// out of every in-flight epoch, add the new ones with their Add barrier,
// and wait until every backfill is done and an epoch after it committed.
//
// While it rebuilds, a SELECT of the view (or of one built on it) reads
// what the rebuild has committed so far: empty right after the clear, then
// a growing part of the result, complete when RecoverJob returns. The old
// rows are not kept.
//
// Cancelling the statement stops the wait only: the rebuild goes on.
func (e *Engine) RecoverJob(ctx context.Context, name string) (err error) {
	defer e.ddl.observe("recover_job", time.Now(), &err)
	// Two rebuilds of overlapping jobs would each register actors the
	// other tore down.
	e.rebuildMu.Lock()
	defer e.rebuildMu.Unlock()
	rels, err := e.recoverTargets(name)
	if err != nil {
		return err
	}
	old := map[uint32][]stream.ActorID{}
	for _, r := range rels {
		old[r.ID] = actorsOf(r)
	}
	rebuilt, adds, err := e.resetAndRedeploy(ctx, rels)
	if err != nil {
		// The jobs may be half torn down; a full recovery rebuilds the
		// graph from the catalog, which is always consistent.
		_ = e.coord.Recover(context.WithoutCancel(ctx), fmt.Errorf("RECOVER MATERIALIZED VIEW %s failed: %w", name, err))
		return err
	}
	// Told after deployMu is released: the coordinator may be waiting for
	// it in a recovery.
	if err := e.coord.ResetJobs(ctx, old); err != nil {
		return err
	}
	for _, r := range rebuilt {
		e.reapplyControl(r)
		_, err := e.coord.AddJob(ctx, jobSpec(r), adds[r.ID])
		// A recovery since the redeploy rebuilt them from the catalog,
		// which already holds their new actors: as good.
		if err != nil && !errors.Is(err, barrier.ErrJobExists) && !errors.Is(err, barrier.ErrRecovering) {
			return fmt.Errorf("register rebuilt job %s: %w", r.Name, err)
		}
	}
	if err := e.dropIfDropped(ctx, rebuilt); err != nil {
		return err
	}
	return e.waitCaughtUp(ctx, rebuilt)
}

// dropIfDropped finishes a DROP that came between the redeploy and the
// registration: it told the coordinator about actors it did not know yet,
// which did nothing, and the registration then added them. Telling it
// again removes them and deletes the state.
func (e *Engine) dropIfDropped(ctx context.Context, rels []*catalog.Relation) error {
	jobs := map[uint32][]stream.ActorID{}
	for _, r := range rels {
		if cur, ok := e.catalog.ByID(r.ID); !ok || cur.State == catalog.StateDropping {
			jobs[r.ID] = actorsOf(r)
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	if err := e.coord.DropJobs(ctx, jobs); err != nil {
		return err
	}
	return sqlerr.New(sqlerr.UndefinedTable, "the materialized view was dropped while it was being rebuilt")
}

// recoverTargets is the view name names and everything built on it, in
// dependency order; all must be created (not being created or dropped).
func (e *Engine) recoverTargets(name string) ([]*catalog.Relation, error) {
	rel, ok := e.catalog.ByName(name)
	if !ok {
		return nil, sqlerr.Errorf(sqlerr.UndefinedTable, "materialized view %q does not exist", name)
	}
	if rel.Kind != catalog.KindMaterializedView {
		return nil, sqlerr.Errorf(sqlerr.WrongObjectType, "%q is not a materialized view", name)
	}
	rels := e.catalog.Closure(rel.ID)
	for _, r := range rels {
		if r.Kind == catalog.KindSink {
			// Rebuilt from its inputs, a sink would write every row of
			// them out again, and nothing it wrote before is taken back.
			serr := sqlerr.Errorf(sqlerr.FeatureNotSupported, "cannot recover materialized view %q: sink %q reads it "+
				"and would write all of its rows again", name, r.Name)
			serr.Hint = fmt.Sprintf("Drop the sink first (DROP SINK %s), or use RECOVER, which replays only the uncommitted epoch.", r.Name)
			return nil, serr
		}
		if r.State != catalog.StateCreated {
			serr := sqlerr.Errorf(objectNotInPrerequisiteState, "materialized view %q is still being created", r.Name)
			serr.Hint = "Wait for it (SHOW JOBS) or cancel it (CANCEL JOBS) first."
			return nil, serr
		}
	}
	return rels, nil
}

const objectNotInPrerequisiteState = sqlerr.Code("55000")

// resetAndRedeploy does the compute and storage part of RecoverJob under
// deployMu, so a recovery sees the jobs either before or after it: tear
// down, discard, clear state, new actors, prepare and start. It returns
// the rebuilt relations and, by job, the dispatchers their Add barrier
// installs upstream.
func (e *Engine) resetAndRedeploy(ctx context.Context, rels []*catalog.Relation) ([]*catalog.Relation, map[uint32]map[stream.ActorID][]stream.Dispatcher, error) {
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	// Drops mark their relations under deployMu: checked here, a view
	// dropped since recoverTargets is never brought back.
	for _, r := range rels {
		if cur, ok := e.catalog.ByID(r.ID); !ok || cur.State != catalog.StateCreated {
			return nil, nil, sqlerr.Errorf(sqlerr.UndefinedTable, "materialized view %q was dropped", r.Name)
		}
	}
	ids := make([]uint32, len(rels))
	for i, r := range rels {
		ids[i] = r.ID
	}
	if err := e.node.DropJobs(ctx, ids); err != nil {
		return nil, nil, err
	}
	for _, r := range rels {
		// Writes the old actors staged before they exited: no later commit
		// may include them.
		for _, a := range actorsOf(r) {
			e.store.DiscardActor(storage.ActorID(a))
		}
	}
	if err := e.clearJobStates(ctx, rels); err != nil {
		return nil, nil, err
	}
	rebuilt, err := e.renewActors(ctx, rels)
	if err != nil {
		return nil, nil, err
	}
	// One job after the other, upstream first: a dependent's edges from
	// the rebuilt upstream's started actors become Add dispatchers, as for
	// a view created on a view.
	adds := map[uint32]map[stream.ActorID][]stream.Dispatcher{}
	for _, r := range rebuilt {
		a, err := e.node.Prepare(ctx, deployment(r))
		if err != nil {
			return nil, nil, fmt.Errorf("rebuild %s: %w", r.Name, err)
		}
		if err := e.node.Start(ctx, r.ID); err != nil {
			return nil, nil, fmt.Errorf("rebuild %s: %w", r.Name, err)
		}
		adds[r.ID] = a
	}
	return rebuilt, adds, nil
}

// renewActors gives each job new actor ids, durably. New ids keep the old
// actors' late reports (a collection, an exit) from ever being taken for
// the rebuilt ones'.
func (e *Engine) renewActors(ctx context.Context, rels []*catalog.Relation) ([]*catalog.Relation, error) {
	out := make([]*catalog.Relation, 0, len(rels))
	for _, r := range rels {
		n := 0
		for _, ids := range r.Job.Actors {
			n += len(ids)
		}
		block, err := e.IDs(ctx, n)
		if err != nil {
			return nil, err
		}
		cur, err := e.catalog.Update(ctx, r.ID, func(cur *catalog.Relation) error {
			for _, f := range cur.Job.Plan.Fragments {
				fresh := make([]uint32, len(cur.Job.Actors[f.ID]))
				for i := range fresh {
					fresh[i] = block.Next()
				}
				cur.Job.Actors[f.ID] = fresh
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, cur)
	}
	return out, nil
}

// resetMarker names the meta entry that says a relation's state is being
// cleared for a rebuild.
func resetMarker(id uint32) string { return fmt.Sprintf("engine/state-reset/%010d", id) }

// clearJobStates deletes every state table of rels (rows, backfill
// progress, operator state). Each table goes in its own synced batch, so
// the markers are written first and removed last: a crash in between
// leaves them, and Rebuild clears those relations again before deploying
// them (finishStateResets), never a job with half its state.
func (e *Engine) clearJobStates(ctx context.Context, rels []*catalog.Relation) error {
	for _, r := range rels {
		if err := e.store.PutMeta(ctx, resetMarker(r.ID), []byte{1}); err != nil {
			return err
		}
	}
	for _, r := range rels {
		if err := e.clearJobState(ctx, r); err != nil {
			return err
		}
	}
	for _, r := range rels {
		if err := e.store.DeleteMeta(ctx, resetMarker(r.ID)); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) clearJobState(ctx context.Context, r *catalog.Relation) error {
	for _, t := range r.Job.StateTables {
		if err := e.store.DropTableState(ctx, t); err != nil {
			return err
		}
	}
	return e.store.DropTableState(ctx, r.Table.ID)
}

// finishStateResets clears the state of live relations whose rebuild a
// crash interrupted (their marker is still there). Rebuild calls it before
// deploying them: they then backfill from scratch, as the rebuild would
// have.
func (e *Engine) finishStateResets(ctx context.Context, live []*catalog.Relation) error {
	for _, r := range live {
		_, found, err := e.store.Meta(resetMarker(r.ID))
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		if err := e.clearJobState(ctx, r); err != nil {
			return err
		}
		if err := e.store.DeleteMeta(ctx, resetMarker(r.ID)); err != nil {
			return err
		}
	}
	return nil
}

// waitCaughtUp waits until every rebuilt job's backfill is done, then for
// an epoch after that to commit: from then on the views are complete.
func (e *Engine) waitCaughtUp(ctx context.Context, rels []*catalog.Relation) error {
	for _, r := range rels {
		// A job dropped meanwhile (errJobGone) is the caller's to notice.
		if err := e.waitBackfilled(ctx, r); err != nil && !errors.Is(err, errJobGone) {
			return err
		}
	}
	return e.flushOrCancelled(ctx)
}
