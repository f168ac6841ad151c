package engine

import (
	"context"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream/source"
)

// truncator trims tables' DML logs behind committed epochs, in the
// background, at most one pass at a time.
type truncator struct {
	ctx     context.Context
	running atomic.Bool
	commits atomic.Uint64
}

// truncateEvery is how many commits pass between truncation passes.
const truncateEvery = 16

// afterCommit runs on the coordinator goroutine: it only starts a pass,
// which prunes the tables' tails after every commit and truncates their
// logs every truncateEvery commits. A commit that finds a pass running
// leaves the work to the next one.
func (e *Engine) afterCommit(uint64) {
	truncate := e.trunc.commits.Add(1)%truncateEvery == 0
	if !e.trunc.running.CompareAndSwap(false, true) {
		return
	}
	e.group.Go(e.trunc.ctx, "truncate-dml", func(ctx context.Context) error {
		defer e.trunc.running.Store(false)
		e.pruneTails(ctx)
		if !truncate {
			return nil
		}
		for _, r := range e.catalog.All() {
			if ctx.Err() != nil {
				return nil
			}
			off, ok := offsetTable(r)
			if !ok {
				continue
			}
			if _, err := source.TruncateCommitted(ctx, e.store, r.Table.ID, off); err != nil {
				e.log.Warn("truncate dml log", "table", r.Name, "err", err)
			}
		}
		return nil
	})
}

// offsetTable finds the table source's offset table in a table's job.
func offsetTable(r *catalog.Relation) (plan.Table, bool) {
	if r.Kind != catalog.KindTable || r.State == catalog.StateDropping || r.Job.Plan == nil {
		return plan.Table{}, false
	}
	for _, f := range r.Job.Plan.Fragments {
		if n := findTableSource(f.Root); n != nil {
			return n.TableSource.OffsetTable, true
		}
	}
	return plan.Table{}, false
}

// findTableSource returns the table source node under n (a fragment's
// root, or a watermark filter or union above the source), or nil.
func findTableSource(n *plan.Node) *plan.Node {
	if n == nil {
		return nil
	}
	if n.Kind == plan.KindTableSource && n.TableSource != nil {
		return n
	}
	for _, in := range n.Inputs {
		if s := findTableSource(in); s != nil {
			return s
		}
	}
	return nil
}
