package engine

import (
	"context"
	"sort"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/plan"
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
	// Total is how many rows the backfill has to scan: the committed row
	// count of every upstream table it reads, summed (a self-join reads
	// its table twice and counts it twice).
	Total int64
	// Progress is Scanned / Total in percent, in [0, 100]: 100 once the
	// backfill is done, below 100 until then (see progressPercent).
	Progress float64
}

// Jobs lists the jobs of relations still being created, by id. Scanned is
// read from the running backfill executors; Total from the upstream
// tables' committed row counts, which their materialize executors keep in
// the same epoch batch as the rows (storage/rowcount.go): a few small keys
// per table, never a scan.
func (e *Engine) Jobs() []JobInfo {
	var out []JobInfo
	for _, r := range e.catalog.All() {
		if r.State != catalog.StateCreating {
			continue
		}
		scanned, done, _ := e.node.JobProgress(r.ID)
		total := e.backfillTotal(r)
		out = append(out, JobInfo{ID: r.ID, Name: r.Name, Definition: r.Definition,
			Status: string(r.State), Scanned: scanned, Done: done, Total: total,
			Progress: progressPercent(scanned, total, done)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// backfillTotal sums the committed row counts of the tables r's backfills
// read. The count moves with the upstream's commits, as the snapshot the
// backfill scans does (each epoch's scan reads that epoch's snapshot). A
// table without a committed count yet holds no committed rows.
func (e *Engine) backfillTotal(r *catalog.Relation) int64 {
	var total int64
	for _, id := range backfillUpstreams(r.Job.Plan) {
		n, _, err := e.store.RowCount(id)
		if err != nil {
			e.log.Warn("row count", "table", id, "err", err)
			continue
		}
		total += n
	}
	return total
}

// backfillUpstreams lists the upstream table of every backfill node of
// job, once per node.
func backfillUpstreams(job *plan.Job) []uint32 {
	if job == nil {
		return nil
	}
	var ids []uint32
	var walk func(n *plan.Node)
	walk = func(n *plan.Node) {
		if n == nil {
			return
		}
		if n.Kind == plan.KindBackfill && n.Backfill != nil {
			ids = append(ids, n.Backfill.Upstream.ID)
		}
		for _, in := range n.Inputs {
			walk(in)
		}
	}
	for _, f := range job.Fragments {
		walk(f.Root)
	}
	return ids
}

// progressPercent is scanned/total in percent, an estimate as the
// upstream changes under the backfill: a row inserted behind the scan
// raises total but reaches the job as a live change, never scanned, so
// the ratio may end below 100; a row deleted behind the scan lowers total,
// so it may overshoot. It is capped just below 100 until the backfill says
// it is done, so that 100 % always means done.
func progressPercent(scanned, total int64, done bool) float64 {
	switch {
	case done:
		return 100
	case total <= 0:
		return 0
	}
	return min(100*float64(scanned)/float64(total), maxUnfinished)
}

// maxUnfinished is the largest progress shown for a backfill still running.
const maxUnfinished = 99.99

// CancelJobs drops jobs still being created at once, with everything built
// on them, whatever their backfill and barriers are doing. It checks every
// id before it cancels any: an id that names no creating job is 42704.
func (e *Engine) CancelJobs(ctx context.Context, ids []uint64) (err error) {
	defer e.ddl.observe("cancel_jobs", time.Now(), &err)
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
