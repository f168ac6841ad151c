package agg

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A bulk load into a view with min or max wrote one multiset row per input
// row through StateTable.AddCount: a lookup in the table's index of the
// epoch's writes, a boxed row in its overlay, then at the seal a sort of
// every key and a second encoding. For a million-row COPY under a GROUP BY
// auction view with max(price), that was 1.5 of the 5 CPU seconds the
// server spent per load (sluice-bench ingest, copy_groupby).
//
// The inserts of a group new this epoch (group.isNew: no result row, so no
// multiset row either) need none of that: no value of theirs can be in the
// table yet. So a min or max call's inserted values wait on the group,
// unread by anyone (the group's extreme is kept in memory as they come),
// and the flush writes them once each, counted, in key order, as fresh
// rows (storage.StateTable.InsertFresh) that seal into a file beside the
// epoch's other writes.
//
// Fresh rows are older than every overlay write of a table, sealed or not,
// so they go fresh only when the table holds no overlay write at all
// (HoldsNoWrites: no earlier epoch's tombstone of a removed group's value
// can be waiting to commit); otherwise the flush writes them through
// AddCount as before. Any other change to a waiting group's multiset (a
// retraction, or a value of a call that keeps its multiplicities) first
// writes the group's waiting values through AddCount, and the group's
// later values of the epoch go that way too.

// pendingVals is one table-backed call's values waiting in a group:
// integers unboxed (ints), any other type as datums (vals).
type pendingVals struct {
	vals []types.Datum
	ints []int64
	// off: the group's multiset took a write this epoch, so its values
	// can no longer wait.
	off bool
}

func (p *pendingVals) len() int { return len(p.vals) + len(p.ints) }

// take returns the waiting values as datums and forgets them.
func (p *pendingVals) take() []types.Datum {
	vals := p.vals
	for _, n := range p.ints {
		vals = append(vals, n)
	}
	p.vals, p.ints = nil, nil
	return vals
}

// waiting returns g's waiting values of call ci, nil when none can wait
// (the value is not an insert, the group not new, the call no min or
// max, or the group's multiset was written this epoch).
func (a *Agg) waiting(g *group, ci int, call *callSpec, sign int64) *pendingVals {
	if sign < 0 || !g.isNew || !isExtremeCall(call) || call.running || len(call.vt.cols) != 1 {
		return nil
	}
	if g.pend == nil {
		g.pend = make([]pendingVals, len(a.calls))
	}
	if p := &g.pend[ci]; !p.off {
		return p
	}
	return nil
}

// mayWaitInt is mayWait for row i of an integer column: the value waits
// unboxed, and is boxed only when it becomes the group's extreme.
func (a *Agg) mayWaitInt(g *group, ci int, call *callSpec, col *types.Vec[int64], i int, sign int64) bool {
	p := a.waiting(g, ci, call, sign)
	if p == nil {
		return false
	}
	n := col.Vals[i]
	p.ints = append(p.ints, n)
	g.noteExtremeInt(ci, call, n)
	return true
}

// mayWait reports whether call ci's value v (an insert, sign +1) can wait
// in g, and adds it if so.
func (a *Agg) mayWait(g *group, ci int, call *callSpec, v types.Datum, sign int64) bool {
	p := a.waiting(g, ci, call, sign)
	if p == nil {
		return false
	}
	p.vals = append(p.vals, v)
	g.noteExtreme(ci, call, v, 0, 1)
	return true
}

// stopWaiting writes call ci's waiting values of g through AddCount, so
// that the change about to be made sees them, and keeps the group's later
// values from waiting this epoch.
func (a *Agg) stopWaiting(ctx context.Context, g *group, ci int, call *callSpec) error {
	if g.pend == nil {
		g.pend = make([]pendingVals, len(a.calls))
	}
	p := &g.pend[ci]
	p.off = true
	for j, v := range p.take() {
		if j%cancelEvery == cancelEvery-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if _, _, err := call.vt.bump(ctx, g.key, types.Row{v}, 1, g.isNew); err != nil {
			return err
		}
	}
	return nil
}

// writeWaiting writes every waiting value of the epoch, call by call, as
// fresh rows when the call's table holds no other write, else through
// AddCount. It runs at the end of the flush, before the seal: the
// groups' outputs need none of them (their extremes are known), and no
// scan of the epoch meets fresh rows of its own.
func (a *Agg) writeWaiting(ctx context.Context, epoch uint64) error {
	for ci, call := range a.calls {
		if !isExtremeCall(call) {
			continue
		}
		call.vt.waited.forgetCommitted(call.vt.t.CommittedEpoch())
		waiting := a.waitingGroups(ci)
		if len(waiting) == 0 {
			continue
		}
		var err error
		if call.vt.t.HoldsNoWrites() {
			err = a.writeFresh(ctx, ci, call, waiting, epoch)
		} else {
			for _, g := range waiting {
				if err = a.stopWaiting(ctx, g, ci, call); err != nil {
					break
				}
			}
		}
		if err != nil {
			return fmt.Errorf("agg: write %s values: %w", call.Kind, err)
		}
	}
	return nil
}

// waitingGroups returns the dirty groups with values of call ci waiting.
func (a *Agg) waitingGroups(ci int) []*group {
	var out []*group
	for _, g := range a.groups.dirty {
		if g.pend == nil || g.pend[ci].len() == 0 {
			continue
		}
		if !a.simple && g.rows <= 0 {
			// Removed with values never retracted (deletes of rows
			// that were never inserted): the values go with it.
			g.pend[ci].vals, g.pend[ci].ints = nil, nil
			continue
		}
		out = append(out, g)
	}
	return out
}

// freshBatchRows is how many value rows one InsertFresh takes.
const freshBatchRows = 16 << 10

// writeFresh writes the waiting values of call ci in groups as fresh rows:
// the groups in key order, each group's values sorted by key and counted.
// Should the table refuse a batch (it never should: the keys are distinct
// and rise), the batch goes through AddCount instead.
func (a *Agg) writeFresh(ctx context.Context, ci int, call *callSpec, groups []*group, epoch uint64) error {
	a.win.freshEpoch = epoch
	w := newFreshWriter(call.vt)
	enc, err := w.sortGroups(groups)
	if err != nil {
		return err
	}
	vt := call.vt
	for i, g := range groups {
		// A million values take a while: a stop must not wait for them.
		if i%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if _, ok := vt.waited.get(enc[i]); ok {
			// Fresh rows of an epoch not yet committed: cannot happen
			// (the group had a result row since), but AddCount is right.
			if err := a.stopWaiting(ctx, g, ci, call); err != nil {
				return err
			}
			continue
		}
		kept, err := w.addGroup(g.key, &g.pend[ci])
		if err != nil {
			return err
		}
		vt.waited.add(epoch, enc[i], kept)
		if w.b.Len() >= freshBatchRows {
			if err := w.flush(ctx); err != nil {
				return err
			}
		}
	}
	return w.flush(ctx)
}

// freshWriter builds a value table's fresh rows in key order.
type freshWriter struct {
	vt      *valueTable
	b       *types.Builder
	row     types.Row
	keys    []byte   // the key encodings of one group's values
	at      []int    // keys[at[k]:at[k+1]] is value k's
	order   []int    // one group's values in key order
	counted []keyRun // one group's distinct values
	counts  []int64  // or, for integers, their counts
}

// keyRun is a distinct value: the first of its equal keys, and how many.
type keyRun struct {
	v types.Datum
	n int64
}

func newFreshWriter(vt *valueTable) *freshWriter {
	return &freshWriter{vt: vt, b: types.NewUnboundedBuilder(vt.types)}
}

// sortGroups orders groups by the key encoding of their group keys, which
// orders their value rows' keys too (a key's columns encode prefix-free).
// It returns each group's key encoding, in the new order.
func (w *freshWriter) sortGroups(groups []*group) ([][]byte, error) {
	enc := make([][]byte, len(groups))
	for i, g := range groups {
		k, err := w.vt.groupKey(g.key)
		if err != nil {
			return nil, err
		}
		enc[i] = k
	}
	idx := make([]int, len(groups))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int { return bytes.Compare(enc[x], enc[y]) })
	sortedG, sortedK := make([]*group, len(groups)), make([][]byte, len(groups))
	for i, j := range idx {
		sortedG[i], sortedK[i] = groups[j], enc[j]
	}
	copy(groups, sortedG)
	return sortedK, nil
}

// addGroup appends a group's distinct waiting values, in key order, with
// their multiplicities, forgets them, and returns the distinct values.
func (w *freshWriter) addGroup(key types.Row, p *pendingVals) (waitedVals, error) {
	var kept waitedVals
	if len(p.ints) > 0 && len(p.vals) == 0 {
		kept.ints = w.countInts(p.ints)
		p.ints = nil // kept.ints is its array now
		for j, n := range kept.ints {
			w.appendRow(key, n, w.counts[j])
		}
	} else {
		if err := w.sortValues(key, p.take()); err != nil {
			return waitedVals{}, err
		}
		kept.vals = make([]types.Datum, len(w.counted))
		for j, r := range w.counted {
			kept.vals[j] = r.v
			w.appendRow(key, r.v, r.n)
		}
	}
	clear(w.row)
	return kept, nil
}

// appendRow appends the value row (group keys, v, n).
func (w *freshWriter) appendRow(key types.Row, v types.Datum, n int64) {
	w.row = append(append(append(w.row[:0], key...), v), n)
	w.b.Append(types.Insert, w.row)
}

// countInts sorts integers (descending for max) and keeps each once, in
// place, their counts in w.counts: their order and equality are their
// keys'. It returns the distinct values.
func (w *freshWriter) countInts(ints []int64) []int64 {
	slices.Sort(ints)
	if w.vt.orders[w.vt.nGroup].Desc {
		slices.Reverse(ints)
	}
	w.counts = w.counts[:0]
	k := 0
	for j, n := range ints {
		if j > 0 && ints[k-1] == n {
			w.counts[k-1]++
			continue
		}
		ints[k] = n
		w.counts = append(w.counts, 1)
		k++
	}
	return slices.Clip(ints[:k])
}

// sortValues fills w.counted with vals' distinct keys in key order, each
// the first value of its key (the spelling AddCount keeps when it counts
// a key again in one epoch, doc.go) and its count.
func (w *freshWriter) sortValues(key types.Row, vals []types.Datum) error {
	w.order = w.order[:0]
	for k := range vals {
		w.order = append(w.order, k)
	}
	same, err := w.sortKeys(key, vals)
	if err != nil {
		return err
	}
	w.counted = w.counted[:0]
	for j, k := range w.order {
		if j > 0 && same(w.order[j-1], k) {
			w.counted[len(w.counted)-1].n++
			continue
		}
		w.counted = append(w.counted, keyRun{v: vals[k], n: 1})
	}
	return nil
}

// sortKeys sorts w.order by the values' key encodings, for any type.
func (w *freshWriter) sortKeys(group types.Row, vals []types.Datum) (same func(x, y int) bool, err error) {
	nG := w.vt.nGroup
	w.keys, w.at = w.keys[:0], append(w.at[:0], 0)
	w.row = append(w.row[:0], group...)
	for _, v := range vals {
		w.row = append(w.row[:nG], v)
		if w.keys, err = codec.EncodeKey(w.keys, w.row, w.vt.types[:nG+1], w.vt.orders[:nG+1]); err != nil {
			return nil, err
		}
		w.at = append(w.at, len(w.keys))
	}
	clear(w.row)
	key := func(k int) []byte { return w.keys[w.at[k]:w.at[k+1]] }
	slices.SortStableFunc(w.order, func(x, y int) int { return bytes.Compare(key(x), key(y)) })
	return func(x, y int) bool { return bytes.Equal(key(x), key(y)) }, nil
}

// flush stores the rows built so far as fresh rows.
func (w *freshWriter) flush(ctx context.Context) error {
	c := w.b.Take()
	if c == nil {
		return nil
	}
	rows := make([]int, c.Capacity())
	for i := range rows {
		rows[i] = i
	}
	ok, err := w.vt.t.InsertFresh(c, rows)
	if err != nil || ok {
		return err
	}
	nG := w.vt.nGroup
	for i := range rows {
		row := c.Row(i)
		n, _ := row[nG+1].(int64)
		if _, _, err := w.vt.bump(ctx, row[:nG], row[nG:nG+1], n, true); err != nil {
			return err
		}
	}
	return nil
}
