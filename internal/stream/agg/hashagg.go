package agg

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// Agg is the hash aggregation executor (and, with no group keys, the simple
// aggregation). It folds each input chunk into per-group state and emits
// the changed groups when a barrier arrives; see doc.go.
type Agg struct {
	input     stream.Executor
	schema    []types.Type
	groupKeys []int
	calls     []*callSpec
	tables    []*storage.StateTable // every table it owns, for Seal
	groups    *groups
	out       *outputEnv
	ectx      *expr.Context
	simple    bool
	chunkSize int

	// flush is the state of an in-progress barrier flush (pending != nil).
	flush struct {
		pending *stream.Barrier
		pos     int
		// tail: the dirty groups are done; closed groups and
		// watermarks follow (flushTail).
		tail    bool
		stash   []outRow
		builder *types.Builder
		// Scratch reused across groups: stashBuf backs stash (at most an
		// update pair), rowBuf an output row, cmpX/cmpY sameOutput.
		stashBuf   [2]outRow
		rowBuf     types.Row
		cmpX, cmpY []byte
	}
	win windows
	// early holds output of groups a watermark closed before the barrier
	// (early.go), to return first.
	early        []*types.Chunk
	simpleLoaded bool
	// sawBarrier is set once the first barrier has passed.
	sawBarrier bool
	filterCols []types.Column
	keyCols    []types.Column // scratch: the chunk's group-key columns
	valsBuf    types.Row      // scratch: a table-backed call's values
}

// outRow is one row to emit: the group key then the call outputs.
type outRow struct {
	op   types.Op
	key  types.Row
	vals types.Row
}

// Schema returns the group keys' types then one type per call.
func (a *Agg) Schema() []types.Type { return a.schema }

// Next folds input chunks until a barrier, then returns the epoch's changes
// chunk by chunk and finally the barrier.
func (a *Agg) Next(ctx context.Context) (stream.Message, error) {
	for {
		if len(a.early) > 0 {
			return a.nextEarly(), nil
		}
		if a.flush.pending != nil {
			return a.continueFlush(ctx)
		}
		msg, err := a.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		switch {
		case msg.Chunk != nil:
			if err := a.handleChunk(ctx, msg.Chunk); err != nil {
				return stream.Message{}, err
			}
		case msg.Barrier != nil:
			if err := a.beginFlush(ctx, msg.Barrier); err != nil {
				return stream.Message{}, err
			}
		case msg.Watermark != nil:
			if !a.onWatermark(msg.Watermark) {
				continue
			}
			if err := a.closeEarly(ctx); err != nil {
				return stream.Message{}, err
			}
		}
	}
}

// handleChunk folds every visible row into its group.
func (a *Agg) handleChunk(ctx context.Context, c *types.Chunk) error {
	if err := a.evalFilters(c); err != nil {
		return err
	}
	keyCols := a.keyCols[:0]
	for _, k := range a.groupKeys {
		keyCols = append(keyCols, c.Cols[k])
	}
	a.keyCols = keyCols
	if a.groups.intKeyed {
		a.groups.ints.prepare(keyCols)
		defer a.groups.ints.release()
	}
	defer clear(keyCols) // do not pin the chunk
	for i, n := 0, c.Capacity(); i < n; i++ {
		if !c.Visible(i) {
			continue
		}
		g, err := a.groups.getAt(ctx, keyCols, i)
		if err != nil {
			return err
		}
		sign := int64(1)
		if !c.Op(i).IsInsert() {
			sign = -1
		}
		g.rows += sign
		for ci, call := range a.calls {
			if f := a.filterCols[ci]; f != nil && !isTrue(f, i) {
				continue
			}
			if err := a.applyCall(ctx, g, ci, call, c, i, sign); err != nil {
				return err
			}
		}
	}
	return nil
}

// evalFilters evaluates each call's FILTER over the chunk. Row errors are
// NULL (the context is non-strict), so the row is simply not counted.
func (a *Agg) evalFilters(c *types.Chunk) error {
	for ci, call := range a.calls {
		a.filterCols[ci] = nil
		if call.filter == nil {
			continue
		}
		col, err := call.filter.Eval(a.ectx, c)
		if err != nil {
			return fmt.Errorf("agg: %s FILTER: %w", call.Kind, err)
		}
		a.filterCols[ci] = col
	}
	return nil
}

func isTrue(col types.Column, i int) bool {
	v, ok := col.(*types.Vec[bool])
	return ok && !v.IsNull(i) && v.Vals[i]
}

// applyCall folds row i into call ci's state in group g.
func (a *Agg) applyCall(ctx context.Context, g *group, ci int, call *callSpec, c *types.Chunk, i int, sign int64) error {
	st := &g.states[ci]
	if len(call.Args) == 0 { // count(*)
		st.n += sign
		return nil
	}
	col := c.Cols[call.Args[0]]
	if col.IsNull(i) && call.Kind != plan.AggArrayAgg { // array_agg keeps NULLs
		return nil
	}
	if call.kept {
		return applyKept(g, ci, call, col, i, sign)
	}
	if !call.tableBacked {
		return a.applyRunning(st, call, col, i, sign)
	}
	if iv, ok := col.(*types.Vec[int64]); ok && isExtremeCall(call) && a.mayWaitInt(g, ci, call, iv, i, sign) {
		return nil
	}
	vals := a.valsBuf[:0] // bump copies what it keeps
	for _, cc := range call.vt.cols {
		vals = append(vals, c.Cols[cc].Get(i))
	}
	a.valsBuf = vals
	if a.mayWait(g, ci, call, vals[0], sign) {
		clear(vals)
		return nil
	}
	if g.isNew && isExtremeCall(call) {
		if err := a.stopWaiting(ctx, g, ci, call); err != nil {
			clear(vals)
			return err
		}
	}
	before, after, err := call.vt.bump(ctx, g.key, vals, sign, g.isNew)
	if err == nil && isExtremeCall(call) {
		g.noteExtreme(ci, call, vals[0], before, after)
	}
	clear(vals)
	if err != nil || !call.running {
		return err
	}
	// A DISTINCT running call sees a value only when it enters or leaves
	// the group's distinct set.
	switch {
	case before == 0 && after > 0:
		return st.apply(call, col.Get(i), 1, a.out.dec)
	case before > 0 && after == 0:
		return st.apply(call, col.Get(i), -1, a.out.dec)
	}
	return nil
}

// applyRunning is the hot path: count and integer sums skip boxing.
func (a *Agg) applyRunning(st *runState, call *callSpec, col types.Column, i int, sign int64) error {
	if call.Kind == plan.AggSumCounts {
		if v, ok := col.(*types.Vec[int64]); ok {
			st.n += sign * v.Vals[i]
			return nil
		}
	}
	if call.class == sumInt {
		if v, ok := col.(*types.Vec[int64]); ok {
			st.n += sign
			st.addInt(v.Vals[i], sign < 0)
			return nil
		}
	}
	if call.Kind == plan.AggCount {
		st.n += sign
		return nil
	}
	return st.apply(call, col.Get(i), sign, a.out.dec)
}
