package agg

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// windows is what an aggregation does with watermarks (see doc.go,
// "Watermarks"). A watermark on the input column of group key j is
// passed on as one on output column j, after the epoch's changes. One on
// the first group key also closes groups: every group below it is final.
type windows struct {
	// onClose: emit each group once, when it closes (EMIT ON WINDOW
	// CLOSE), instead of its changes at every barrier.
	onClose bool
	// pass holds the latest watermark per group key, to pass on at the
	// next flush.
	pass map[int]types.Datum
	// cur is the latest watermark on the first group key; closed is what
	// cur was at the last barrier: the groups below it were emitted
	// final by that barrier's flush, and are deleted at the next.
	cur, closed types.Datum
	// dropped: the state below closed is all deleted (until the
	// watermark moves). freshEpoch is the last epoch whose flush wrote
	// value rows as fresh rows, which a scan sees only once committed.
	dropped    bool
	freshEpoch uint64
	// cleanedTo: every group below it is deleted, so scans start there
	// (nil: from the start).
	cleanedTo types.Datum
	// earlyFrom is the least first key of the groups closeEarly left
	// dirty (early.go): it walks them again only once cur passes it.
	earlyFrom types.Datum
	// closing iterates the groups the flush emits as closed (onClose).
	closing storage.Iterator
	wms     []*stream.Watermark // to return before the barrier
}

// onWatermark records a watermark on input column col and reports
// whether it moved the first group key's, which closes groups.
func (a *Agg) onWatermark(w *stream.Watermark) (closes bool) {
	if w.Value == nil || a.simple {
		return false
	}
	for j, k := range a.groupKeys {
		if k != w.Col || (j > 0 && a.win.onClose) {
			// On close, groups go out when the first key closes them:
			// a watermark on another key would run ahead of them.
			continue
		}
		if a.win.pass == nil {
			a.win.pass = map[int]types.Datum{}
		}
		if prev, ok := a.win.pass[j]; !ok || types.Compare(w.Value, prev) > 0 {
			a.win.pass[j] = w.Value
		}
		if j == 0 && (a.win.cur == nil || types.Compare(w.Value, a.win.cur) > 0) {
			a.win.cur, closes = w.Value, true
		}
	}
	return closes
}

// dropClosed deletes the state of the groups the previous barrier closed:
// no row of theirs can arrive any more, and their final output has been
// emitted. It runs at the start of a flush, when no value table holds
// rows of this epoch not yet sealed (pending.go writes them at its end).
func (a *Agg) dropClosed(ctx context.Context) error {
	if a.win.closed == nil || a.win.dropped {
		return nil
	}
	for _, t := range a.tables {
		if err := a.deleteBelow(ctx, t, a.win.cleanedTo, a.win.closed, t == a.groups.result); err != nil {
			return err
		}
	}
	// Fresh value rows not committed yet are left out of the scan: look
	// again at the next flush while any may be. Once none may, what is
	// below closed is gone, and later scans start there.
	if a.win.dropped = a.win.freshEpoch <= a.groups.result.CommittedEpoch(); a.win.dropped {
		a.win.cleanedTo = a.win.closed
	}
	return nil
}

func (a *Agg) deleteBelow(ctx context.Context, t *storage.StateTable, from, bound types.Datum, result bool) (err error) {
	it, err := t.ScanBetween(ctx, from, bound)
	if err != nil {
		return fmt.Errorf("agg: closed groups: %w", err)
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	nG := len(a.groupKeys)
	for n := 1; ; n++ {
		row, ok, err := it.Next()
		if err != nil || !ok {
			return err
		}
		if result {
			err = a.forget(row, nG)
		} else {
			err = t.Delete(row)
		}
		if err != nil {
			return fmt.Errorf("agg: delete closed group: %w", err)
		}
		if n%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}

// forget deletes a group's result row and drops it from the cache.
func (a *Agg) forget(row types.Row, nG int) error {
	kb, err := a.groups.rowKey(row[:nG])
	if err != nil {
		return err
	}
	a.groups.deleted(kb, row[:nG])
	return a.groups.result.Delete(row)
}

// beginClose starts the flush's tail: with EMIT ON WINDOW CLOSE, the
// groups below the watermark, each emitted once as an insert; then the
// watermarks to pass on.
func (a *Agg) beginClose(ctx context.Context) error {
	for j := range len(a.groupKeys) {
		if v, ok := a.win.pass[j]; ok {
			a.win.wms = append(a.win.wms, &stream.Watermark{Col: j, Value: v})
		}
	}
	clear(a.win.pass)
	if !a.win.onClose || a.win.cur == nil {
		return nil
	}
	// Groups below the previous barrier's watermark were emitted and
	// deleted then: start there, past their tombstones.
	it, err := a.groups.result.ScanBetween(ctx, a.win.closed, a.win.cur)
	if err != nil {
		return fmt.Errorf("agg: closing groups: %w", err)
	}
	a.win.closing = it
	return nil
}

// nextClosed appends closed groups to bld until it is full (returning the
// full chunk) or none is left (nil), deleting each as it goes, so each
// group is emitted once.
func (a *Agg) nextClosed(ctx context.Context, bld *types.Builder) (*types.Chunk, error) {
	it := a.win.closing
	if it == nil {
		return nil, nil
	}
	nG, nC := len(a.groupKeys), len(a.calls)
	for n := 1; ; n++ {
		row, ok, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("agg: closing groups: %w", err)
		}
		if !ok {
			a.win.closing = nil
			return nil, it.Close()
		}
		full := bld.Append(types.Insert, row[:nG+nC])
		// Deleted with the emission, in the same epoch: a rebuilt actor
		// must not emit it again. Its value-table rows go at the next
		// flush (dropClosed).
		if err := a.forget(row, nG); err != nil {
			return nil, err
		}
		if full != nil {
			return full, nil
		}
		if n%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
}

// closeFlush ends the flush's watermark work at the barrier: the groups
// below the current watermark are now final, to be deleted next flush.
func (a *Agg) closeFlush() {
	if a.win.closing != nil {
		_ = a.win.closing.Close()
		a.win.closing = nil
	}
	if a.win.cur != a.win.closed {
		a.win.closed, a.win.dropped = a.win.cur, false
	}
}
