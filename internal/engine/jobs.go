package engine

import (
	"context"
	"sort"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// JobInfo describes a streaming job still being created (SHOW JOBS).
type JobInfo struct {
	ID         uint32
	Name       string
	Definition string
	// Status is "creating" while the job backfills.
	Status string
	// Scanned is how many upstream rows its backfill has read so far;
	// Done says the backfill finished and the job waits for the commit
	// that marks it created.
	Scanned int64
	Done    bool
}

// Jobs lists the jobs of relations still being created, by id. Progress
// is read from the running backfill executors, without touching storage.
func (e *Engine) Jobs() []JobInfo {
	var out []JobInfo
	for _, r := range e.catalog.All() {
		if r.State != catalog.StateCreating {
			continue
		}
		scanned, done, _ := e.node.JobProgress(r.ID)
		out = append(out, JobInfo{ID: r.ID, Name: r.Name, Definition: r.Definition,
			Status: string(r.State), Scanned: scanned, Done: done})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CancelJobs drops jobs still being created at once, with everything built
// on them, whatever their backfill and barriers are doing. It checks every
// id before it cancels any: an id that names no creating job is 42704.
func (e *Engine) CancelJobs(ctx context.Context, ids []uint64) error {
	rels := make([]*catalog.Relation, 0, len(ids))
	for _, id := range ids {
		rel, ok := e.catalog.ByID(uint32(id))
		if !ok || uint64(rel.ID) != id || rel.State != catalog.StateCreating {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "job %d does not exist or is not being created", id)
		}
		rels = append(rels, rel)
	}
	for _, rel := range rels {
		if cur, ok := e.catalog.ByID(rel.ID); !ok || cur.State == catalog.StateDropping {
			continue // cancelled with an earlier one (built on it)
		}
		if err := e.dropRelations(ctx, e.catalog.Closure(rel.ID)); err != nil {
			return err
		}
	}
	return nil
}
