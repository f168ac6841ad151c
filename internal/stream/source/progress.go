package source

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// ProgressTable returns the shape a backfill's ProgressTable must have: one
// row per upstream vnode, (vnode int, pos bytea, finished boolean, scanned
// bigint), keyed by vnode. pos is the memcomparable key of the last row
// scanned in that vnode (NULL = not started); scanned counts the rows the
// scan has emitted, for SHOW JOBS. The planner builds it with this function
// so both sides agree.
func ProgressTable(id uint32) plan.Table {
	return plan.Table{
		ID:    id,
		Types: []types.Type{types.TInt32, types.TBytea, types.TBool, types.TInt64},
		PK:    []int{0},
	}
}

func checkProgressTable(t plan.Table) error {
	return checkShape(t, ProgressTable(t.ID), "progress", "ProgressTable")
}

// vnodeProgress is the scan's state in one upstream vnode.
type vnodeProgress struct {
	// pos is the key of the last row emitted by the scan; nil = none yet.
	pos      []byte
	finished bool
	scanned  int64
	// dirty: changed since the last barrier wrote it.
	dirty bool

	// fence is the smallest key of an upstream change dropped in the
	// current epoch (nil = none). The scan must not emit a row at or past
	// it until the next epoch's snapshot, which includes the change.
	fence []byte
	// blocked: the scan reached the fence (or the end of the vnode with a
	// fence set) in the current epoch.
	blocked bool
}

// covers reports whether the scan has emitted key's snapshot row already,
// so that a change to key must be forwarded.
func (p *vnodeProgress) covers(key []byte) bool {
	return p.finished || (p.pos != nil && bytes.Compare(key, p.pos) <= 0)
}

// drop records that a change to key (not covered) was dropped this epoch.
func (p *vnodeProgress) drop(key []byte) {
	if p.fence == nil || bytes.Compare(key, p.fence) < 0 {
		p.fence = slices.Clone(key)
	}
}

// beforeFence reports whether the scan may emit key in this epoch.
func (p *vnodeProgress) beforeFence(key []byte) bool {
	return p.fence == nil || bytes.Compare(key, p.fence) < 0
}

// newEpoch forgets the fences: the next snapshot holds every change
// dropped so far.
func (p *vnodeProgress) newEpoch() { p.fence, p.blocked = nil, false }

// loadProgress reads the committed progress rows into ps (indexed by vnode).
func loadProgress(ctx context.Context, t *storage.StateTable, ps []vnodeProgress) error {
	it, err := t.Scan(ctx, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		row, ok, err := it.Next()
		if err != nil || !ok {
			return err
		}
		v, ok1 := row[0].(int64)
		fin, ok2 := row[2].(bool)
		n, ok3 := row[3].(int64)
		pos, ok4 := row[1].([]byte)
		if !ok1 || !ok2 || !ok3 || (!ok4 && row[1] != nil) || v < 0 || int(v) >= len(ps) {
			return fmt.Errorf("source: malformed progress row %v", row)
		}
		ps[v] = vnodeProgress{pos: pos, finished: fin, scanned: n}
	}
}

// writeProgress writes the dirty vnodes' rows.
func writeProgress(t *storage.StateTable, ps []vnodeProgress) error {
	for v := range ps {
		p := &ps[v]
		if !p.dirty {
			continue
		}
		var pos types.Datum
		if p.pos != nil {
			pos = p.pos
		}
		if err := t.Insert(types.Row{int64(v), pos, p.finished, p.scanned}); err != nil {
			return err
		}
		p.dirty = false
	}
	return nil
}
