package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream"
)

// Drop drops a relation at once, whatever its barriers are doing. Without
// cascade it refuses (2BP01) when other relations read it.
func (e *Engine) Drop(ctx context.Context, name string, cascade bool) error {
	rel, ok := e.catalog.ByName(name)
	if !ok {
		return sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", name)
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
		return err
	}
	return e.dropRelations(ctx, closure)
}

func (e *Engine) markAndTearDown(ctx context.Context, rels []*catalog.Relation) (map[uint32][]stream.ActorID, error) {
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	for i := len(rels) - 1; i >= 0; i-- {
		rels[i].State = catalog.StateDropping
		if err := e.catalog.Put(ctx, rels[i]); err != nil {
			return nil, err
		}
	}
	ids := make([]uint32, len(rels))
	jobs := map[uint32][]stream.ActorID{}
	for i, r := range rels {
		ids[i] = r.ID
		jobs[r.ID] = actorsOf(r)
	}
	return jobs, e.node.DropJobs(ctx, ids)
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
	jobs, err := e.markAndTearDown(ctx, rels)
	if err != nil {
		return err
	}
	for _, r := range rels {
		e.ctl.forget(r.ID)
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
	return nil
}
