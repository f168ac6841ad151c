package agg

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// beginFlush starts emitting the epoch's changed groups; the barrier is
// returned after the last of them.
func (a *Agg) beginFlush(ctx context.Context, b *stream.Barrier) error {
	if a.simple && !a.simpleLoaded && a.sawBarrier {
		// The single row exists from the first epoch on: at the end of it,
		// load (or create) it so that a fresh simple agg emits its initial
		// row. Not at the first barrier itself: nothing may precede a
		// stream's first barrier.
		g, err := a.groups.get(ctx, types.Row{})
		if err != nil {
			return err
		}
		g.dirty = true
		a.simpleLoaded = true
	}
	a.sawBarrier = true
	if err := a.dropClosed(ctx); err != nil {
		return err
	}
	a.flush.pending = b
	a.flush.pos = 0
	return nil
}

// continueFlush returns the next output chunk of the flush, or, when every
// dirty group is written and emitted, seals the tables and returns the
// barrier. Each call returns at most one chunk, so the output of a large
// epoch is never held in memory at once.
func (a *Agg) continueFlush(ctx context.Context) (stream.Message, error) {
	if err := ctx.Err(); err != nil {
		return stream.Message{}, err
	}
	bld := a.flush.builder
	for walked := 1; ; walked++ {
		if len(a.flush.stash) == 0 {
			if a.flush.pos == len(a.groups.dirty) {
				break
			}
			// Groups whose output did not change emit nothing, so one
			// call can walk thousands of them (each a state write, maybe
			// a value-table scan) without returning a chunk: check here
			// too, or a stop waits for the whole flush.
			if walked%cancelEvery == 0 {
				if err := ctx.Err(); err != nil {
					return stream.Message{}, err
				}
			}
			g := a.groups.dirty[a.flush.pos]
			a.flush.pos++
			rows, err := a.finishGroup(ctx, g, a.flush.stashBuf[:0])
			if err != nil {
				return stream.Message{}, err
			}
			if !a.win.onClose {
				a.flush.stash = rows // on close, a group is emitted when closed
			}
		}
		// Keep an update pair in one chunk: start a new chunk if it does
		// not fit in this one.
		if bld.Len() > 0 && bld.Len()+len(a.flush.stash) > a.chunkSize {
			return stream.ChunkMsg(bld.Take()), nil
		}
		for len(a.flush.stash) > 0 {
			r := a.flush.stash[0]
			a.flush.stash = a.flush.stash[1:]
			if full := a.appendOut(bld, r); full != nil {
				return stream.ChunkMsg(full), nil
			}
		}
	}
	if c := bld.Take(); c != nil {
		return stream.ChunkMsg(c), nil
	}
	return a.flushTail(ctx)
}

// flushTail returns, after the dirty groups, the groups closed by the
// watermark (EMIT ON WINDOW CLOSE), then the watermarks to pass on, then
// the barrier.
func (a *Agg) flushTail(ctx context.Context) (stream.Message, error) {
	if !a.flush.tail {
		a.flush.tail = true
		if err := a.beginClose(ctx); err != nil {
			return stream.Message{}, err
		}
	}
	c, err := a.nextClosed(ctx, a.flush.builder)
	if err != nil {
		return stream.Message{}, err
	}
	if c == nil {
		c = a.flush.builder.Take()
	}
	if c != nil {
		return stream.ChunkMsg(c), nil
	}
	if len(a.win.wms) > 0 {
		w := a.win.wms[0]
		a.win.wms = a.win.wms[1:]
		return stream.Message{Watermark: w}, nil
	}
	a.flush.tail = false
	a.closeFlush()
	return a.endFlush(ctx)
}

// appendOut appends one output row (group key, then outputs) through a
// scratch row; the builder copies the datums into its columns.
func (a *Agg) appendOut(bld *types.Builder, r outRow) *types.Chunk {
	row := append(append(a.flush.rowBuf[:0], r.key...), r.vals...)
	a.flush.rowBuf = row
	full := bld.Append(r.op, row)
	clear(row)
	return full
}

// endFlush writes the epoch's waiting values (pending.go), seals every
// table and returns the pending barrier.
func (a *Agg) endFlush(ctx context.Context) (stream.Message, error) {
	b := a.flush.pending
	a.flush.pending = nil
	if err := a.writeWaiting(ctx, b.Epoch); err != nil {
		return stream.Message{}, err
	}
	if err := a.groups.endEpoch(); err != nil {
		return stream.Message{}, err
	}
	a.win.earlyFrom = nil // the next epoch's dirty groups are all new
	for _, t := range a.tables {
		if err := t.Seal(b.Epoch); err != nil {
			return stream.Message{}, fmt.Errorf("agg: seal epoch %d: %w", b.Epoch, err)
		}
	}
	return stream.BarrierMsg(b), nil
}

// finishGroup computes a dirty group's new output, writes its result row
// and appends to stash the rows to emit: + for a new group, U-/U+ for a
// changed one, - for one whose rows are all gone, nothing when the output
// is unchanged. The stashed rows alias g.prev and g.spare, which stay
// untouched until the group is finished again in a later epoch, long after
// the stash is drained.
func (a *Agg) finishGroup(ctx context.Context, g *group, stash []outRow) ([]outRow, error) {
	if !a.simple && g.rows <= 0 {
		prev := g.prev
		g.prev, g.spare = nil, nil
		if prev == nil {
			if err := a.groups.forgetGroup(g); err != nil {
				return nil, err
			}
			return stash, nil
		}
		if err := a.groups.remove(g); err != nil {
			return nil, err
		}
		return append(stash, outRow{types.Delete, g.key, prev}), nil
	}
	if g.spare == nil {
		g.spare = make(types.Row, len(a.calls))
	}
	out := g.spare
	if err := a.outputs(ctx, g, out); err != nil {
		return nil, err
	}
	if a.closesAtFlush(g) {
		// Final now, and nothing reads it again: its row goes (or, made
		// this epoch, is never written), not at the next barrier's scan.
		if err := a.groups.drop(g); err != nil {
			return nil, err
		}
	} else if err := a.groups.persist(g, out); err != nil {
		return nil, err
	}
	prev := g.prev
	switch {
	case prev == nil:
		stash = append(stash, outRow{types.Insert, g.key, out})
	case !a.sameOutput(prev, out):
		stash = append(stash, outRow{types.UpdateDelete, g.key, prev}, outRow{types.UpdateInsert, g.key, out})
	default:
		return stash, nil // prev stays; spare is rewritten next time
	}
	g.prev, g.spare = out, prev
	return stash, nil
}

// closesAtFlush reports whether the watermark closed dirty group g by
// this barrier: its key's window is below the newest watermark, so no row
// of it can come any more, and this flush emits its final output. With
// EMIT ON WINDOW CLOSE the closing scan emits and deletes it instead;
// with value tables (min, max, distinct) the next barrier's scan deletes
// its values and its row together.
func (a *Agg) closesAtFlush(g *group) bool {
	// A NULL key is never below a watermark (the scan below it orders
	// NULLs last): the group stays and keeps updating.
	return !a.win.onClose && len(a.tables) == 1 && a.win.cur != nil &&
		g.key[0] != nil && types.Compare(g.key[0], a.win.cur) < 0
}

// sameOutput compares outputs exactly (1.0 and 1.00 differ: a user sees
// the difference), through their value encodings.
func (a *Agg) sameOutput(x, y types.Row) bool {
	ts := a.schema[len(a.groupKeys):]
	bx, err1 := codec.EncodeValue(a.flush.cmpX[:0], x, ts)
	by, err2 := codec.EncodeValue(a.flush.cmpY[:0], y, ts)
	a.flush.cmpX, a.flush.cmpY = bx, by
	return err1 == nil && err2 == nil && bytes.Equal(bx, by)
}

// outputs computes every call's current value for g into out.
func (a *Agg) outputs(ctx context.Context, g *group, out types.Row) error {
	for ci, call := range a.calls {
		var err error
		if call.running {
			out[ci], err = g.states[ci].output(call, a.out)
		} else {
			out[ci], err = a.tableOutput(ctx, g, ci, call)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tableOutput computes min, max or string_agg from the group's rows in the
// call's value table.
func (a *Agg) tableOutput(ctx context.Context, g *group, ci int, call *callSpec) (types.Datum, error) {
	if call.kept {
		return keptOutput(g, ci, call)
	}
	if isExtremeCall(call) {
		if v, ok := g.knownExtreme(ci); ok {
			return v, nil
		}
		var first types.Datum
		err := call.vt.scan(ctx, g.key, func(vals types.Row, _ int64) bool {
			first = vals[0]
			return false
		})
		if err == nil {
			g.setExtreme(ci, first)
		}
		return first, err
	}
	if call.Kind == plan.AggArrayAgg {
		return a.arrayAgg(ctx, g, call)
	}
	return a.stringAgg(ctx, g, call)
}

// arrayAgg collects the group's values (NULLs included) in key order, the
// ORDER BY columns leading the key; a group with no rows is NULL.
func (a *Agg) arrayAgg(ctx context.Context, g *group, call *callSpec) (types.Datum, error) {
	var out types.DArray
	err := call.vt.scan(ctx, g.key, func(vals types.Row, n int64) bool {
		if call.Distinct {
			n = min(n, 1)
		}
		for range n {
			out = append(out, vals[len(vals)-1])
		}
		return true
	})
	if err != nil || out == nil {
		return nil, err
	}
	return out, nil
}

// stringAgg concatenates the group's values in key order (the ORDER BY
// columns lead the key), each but the first preceded by its own delimiter,
// as Postgres does; a NULL delimiter counts as empty.
func (a *Agg) stringAgg(ctx context.Context, g *group, call *callSpec) (types.Datum, error) {
	var sb strings.Builder
	first, any := true, false
	err := call.vt.scan(ctx, g.key, func(vals types.Row, n int64) bool {
		if call.Distinct {
			n = min(n, 1)
		}
		v, d := vals[len(vals)-2], vals[len(vals)-1]
		for range n {
			if !first {
				sb.WriteString(asString(d))
			}
			sb.WriteString(asString(v))
			first, any = false, true
		}
		return true
	})
	if err != nil || !any {
		return nil, err
	}
	if call.Type.ID == types.Bytea {
		return []byte(sb.String()), nil
	}
	return sb.String(), nil
}

func asString(d types.Datum) string {
	switch v := d.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
