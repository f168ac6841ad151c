package source

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// WatermarkFilter runs plan.WatermarkFilter over a source's rows. Its
// watermark is the largest value of the watermark expression over the
// rows it has let through. A row arriving with its time below the
// watermark (or NULL) is late: hidden, so nothing downstream sees a row a
// watermark it was sent has ruled out. After a chunk that advanced it,
// the new watermark follows as a message of its own.
//
// Each actor keeps its watermark in the table under its index, written at
// the barrier, so a rebuilt actor drops exactly the rows it dropped before
// and announces the restored watermark after its first barrier (the
// executors downstream keep theirs only in memory).
type WatermarkFilter struct {
	input stream.Executor
	col   int
	expr  expr.Expr
	ectx  *expr.Context
	table *storage.StateTable
	index int64
	typ   types.Type

	loaded   bool
	wm       int64 // valid when has
	has      bool
	written  bool // the table holds wm
	announce bool // send wm after the next barrier (restored)
	queued   *stream.Watermark
}

// NewWatermarkFilter builds the filter of n over input.
func NewWatermarkFilter(env *stream.Env, n *plan.Node, input stream.Executor) (*WatermarkFilter, error) {
	wf := n.WatermarkFilter
	if wf == nil {
		return nil, fmt.Errorf("source: watermark_filter node without WatermarkFilter")
	}
	in := input.Schema()
	if wf.Col < 0 || wf.Col >= len(in) || !WatermarkType(in[wf.Col]) {
		return nil, fmt.Errorf("source: watermark column %d of %v", wf.Col, in)
	}
	e, err := expr.Build(wf.Expr, in)
	if err != nil {
		return nil, fmt.Errorf("source: watermark expression: %w", err)
	}
	if e.Type() != in[wf.Col] {
		return nil, fmt.Errorf("source: watermark expression is %s, its column %s", e.Type(), in[wf.Col])
	}
	if err := checkShape(wf.Table, plan.WatermarkTable(wf.Table.ID, in[wf.Col]), "watermark", "plan.WatermarkTable"); err != nil {
		return nil, err
	}
	if env == nil || env.Store == nil {
		return nil, fmt.Errorf("source: watermark filter needs a store")
	}
	t, err := env.OpenTableAllVNodes(wf.Table)
	if err != nil {
		return nil, fmt.Errorf("source: open watermark table: %w", err)
	}
	ectx := env.Expr
	if ectx == nil {
		ectx = &expr.Context{} // non-strict: a row error is NULL
	}
	return &WatermarkFilter{input: input, col: wf.Col, expr: e, ectx: ectx, table: t,
		index: int64(env.Index), typ: in[wf.Col]}, nil
}

// WatermarkType reports whether a column of type t can carry a watermark:
// the time types and integers, whose values the filter compares as int64.
func WatermarkType(t types.Type) bool {
	switch t.ID {
	case types.Timestamp, types.Timestamptz, types.Date, types.Int16, types.Int32, types.Int64:
		return true
	}
	return false
}

// Schema returns the input's schema.
func (w *WatermarkFilter) Schema() []types.Type { return w.input.Schema() }

// Next returns the input's messages with late rows hidden, each advance
// of the watermark after the chunk that made it.
func (w *WatermarkFilter) Next(ctx context.Context) (stream.Message, error) {
	if q := w.queued; q != nil {
		w.queued = nil
		return stream.Message{Watermark: q}, nil
	}
	if err := w.load(ctx); err != nil {
		return stream.Message{}, err
	}
	for {
		msg, err := w.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		switch {
		case msg.Fresh != nil:
			return stream.Message{}, fmt.Errorf("source: fresh rows reached a watermark filter")
		case msg.Barrier != nil:
			return msg, w.barrier(msg.Barrier)
		case msg.Watermark != nil:
			continue // a source's own watermarks are replaced by ours
		case msg.Chunk != nil:
			c, err := w.chunk(msg.Chunk)
			if err != nil {
				return stream.Message{}, err
			}
			if c != nil {
				return stream.ChunkMsg(c), nil
			}
			if q := w.queued; q != nil {
				w.queued = nil
				return stream.Message{Watermark: q}, nil
			}
		}
	}
}

func (w *WatermarkFilter) load(ctx context.Context) error {
	if w.loaded {
		return nil
	}
	w.loaded = true
	row, ok, err := w.table.Get(ctx, types.Row{w.index})
	if err != nil || !ok {
		return err
	}
	v, ok := types.OrderInt64(row[1])
	if !ok {
		return fmt.Errorf("source: watermark table holds %T", row[1])
	}
	w.wm, w.has, w.written, w.announce = v, true, true, true
	return nil
}

// barrier writes a changed watermark and seals the table.
func (w *WatermarkFilter) barrier(b *stream.Barrier) error {
	if w.has && !w.written {
		if err := w.table.Insert(types.Row{w.index, w.datum(w.wm)}); err != nil {
			return fmt.Errorf("source: write watermark: %w", err)
		}
		w.written = true
	}
	if err := w.table.Seal(b.Epoch); err != nil {
		return fmt.Errorf("source: seal watermark table: %w", err)
	}
	if w.announce && w.has {
		w.announce = false
		w.queued = &stream.Watermark{Col: w.col, Value: w.datum(w.wm)}
	}
	return nil
}

// chunk hides c's late rows and advances the watermark over the others;
// nil when no row is left (the advance, if any, is queued either way).
func (w *WatermarkFilter) chunk(c *types.Chunk) (*types.Chunk, error) {
	vis, kept := w.onTime(c)
	if kept == 0 {
		return nil, nil
	}
	out := c
	if kept < c.Cardinality() {
		out = c.WithColumns(c.Cols)
		out.SetVisibility(vis)
	}
	col, err := w.expr.Eval(w.ectx, out)
	if err != nil {
		return nil, fmt.Errorf("source: watermark expression: %w", err)
	}
	if top, ok := maxVisible(col, out); ok && (!w.has || top > w.wm) {
		w.wm, w.has, w.written = top, true, false
		w.queued = &stream.Watermark{Col: w.col, Value: w.datum(top)}
	}
	return out, nil
}

// onTime returns the visibility of c's rows that are not late, and how
// many there are.
func (w *WatermarkFilter) onTime(c *types.Chunk) (types.Bitmap, int) {
	n := c.Capacity()
	vis := make(types.Bitmap, (n+63)/64)
	kept := 0
	col := c.Cols[w.col]
	for i := range n {
		if !c.Visible(i) || col.IsNull(i) {
			continue
		}
		if v, _ := int64At(col, i); w.has && v < w.wm {
			continue
		}
		vis.Set(i)
		kept++
	}
	return vis, kept
}

func (w *WatermarkFilter) datum(v int64) types.Datum { return datumOf(v, w.typ) }

// maxVisible returns the largest non-NULL value of col among c's visible
// rows.
func maxVisible(col types.Column, c *types.Chunk) (int64, bool) {
	var top int64
	found := false
	for i := range c.Capacity() {
		if !c.Visible(i) || col.IsNull(i) {
			continue
		}
		if v, ok := int64At(col, i); ok && (!found || v > top) {
			top, found = v, true
		}
	}
	return top, found
}

// int64At reads row i of a watermark-typed column as an int64.
func int64At(col types.Column, i int) (int64, bool) {
	switch v := col.(type) {
	case *types.Vec[types.DTimestamp]:
		return int64(v.Vals[i]), true
	case *types.Vec[types.DTimestamptz]:
		return int64(v.Vals[i]), true
	case *types.Vec[types.DDate]:
		return int64(v.Vals[i]), true
	case *types.Vec[int64]:
		return v.Vals[i], true
	}
	return 0, false
}

func datumOf(v int64, t types.Type) types.Datum {
	switch t.ID {
	case types.Timestamp:
		return types.DTimestamp(v)
	case types.Timestamptz:
		return types.DTimestamptz(v)
	case types.Date:
		return types.DDate(v)
	}
	return v
}
