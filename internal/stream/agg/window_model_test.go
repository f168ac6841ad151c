package agg

import (
	"maps"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// TestWindowGroupsMatchModel: sum(v) and count(*) GROUP BY (w, k), w
// carrying watermarks, over inserts and deletes. Groups are made, changed,
// emptied and closed in one epoch or across several (a group the
// watermark closes in the epoch that made it is never stored), whatever
// the cache size, with or without EMIT ON WINDOW CLOSE. After every
// barrier the output, applied to a map, must equal the aggregation of the
// live rows (a closed window's groups keep their last output).
func TestWindowGroupsMatchModel(t *testing.T) {
	in := tsch(i64, i64, i32) // sum(integer) is a bigint
	for name, call := range map[string]plan.AggCall{"sum": ac(plan.AggSum, i64, 2), "count": ac(plan.AggCountStar, i64)} {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				w := &windowRun{t: rt, onClose: rapid.Bool().Draw(rt, "onClose"), count: call.Kind == plan.AggCountStar,
					out: map[[2]int64]int64{}, live: map[[3]int64]int{}}
				node := planAgg(in, []int{0, 1}, []plan.AggCall{call}, 1)
				node.EmitOnWindowClose = w.onClose
				w.src = stream.NewMockSource(in)
				a, err := NewAgg(testEnv(streamtest.OpenStore(rt), rapid.SampledFrom([]int{1, 3, 1000}).Draw(rt, "cache")), w.src, node)
				if err != nil {
					rt.Fatal(err)
				}
				w.exec, w.builder = a, types.NewBuilder(in, 3)
				w.barrier()
				for range rapid.IntRange(1, 12).Draw(rt, "epochs") {
					w.epoch(rt)
				}
				w.wm += 10 // close every window
				w.pending = append(w.pending, stream.Message{Watermark: &stream.Watermark{Col: 0, Value: w.wm}})
				w.barrier()
			})
		})
	}
}

// windowRun drives TestWindowGroupsMatchModel's aggregation.
type windowRun struct {
	t       *rapid.T
	onClose bool
	count   bool
	src     *stream.MockSource
	exec    stream.Executor
	builder *types.Builder
	pending []stream.Message
	epochs  uint64
	wm      int64
	live    map[[3]int64]int   // (w, k, v) → copies
	out     map[[2]int64]int64 // the output applied: (w, k) → result
}

// epoch adds rows to open windows, removes some live ones, maybe moves
// the watermark, and ends the epoch.
func (w *windowRun) epoch(rt *rapid.T) {
	for range rapid.IntRange(0, 12).Draw(rt, "rows") {
		r := [3]int64{w.wm + int64(rapid.IntRange(0, 3).Draw(rt, "w")), int64(rapid.IntRange(0, 2).Draw(rt, "k")),
			int64(rapid.IntRange(-2, 5).Draw(rt, "v"))}
		op := types.Insert
		if victim, ok := w.openLiveRow(rapid.IntRange(0, 50).Draw(rt, "victim")); ok && rapid.IntRange(0, 3).Draw(rt, "del") == 0 {
			r, op = victim, types.Delete
			w.live[r]--
		} else {
			w.live[r]++
		}
		if c := w.builder.Append(op, types.Row{r[0], r[1], r[2]}); c != nil {
			w.pending = append(w.pending, stream.ChunkMsg(c))
		}
	}
	if c := w.builder.Take(); c != nil {
		w.pending = append(w.pending, stream.ChunkMsg(c))
	}
	if step := int64(rapid.IntRange(0, 3).Draw(rt, "advance")); step > 0 {
		w.wm += step
		w.pending = append(w.pending, stream.Message{Watermark: &stream.Watermark{Col: 0, Value: w.wm}})
	}
	w.barrier()
}

// openLiveRow returns the n-th live row (modulo their count) of a window
// the watermark has not closed.
func (w *windowRun) openLiveRow(n int) ([3]int64, bool) {
	var open [][3]int64
	for r, c := range w.live {
		if c > 0 && r[0] >= w.wm {
			open = append(open, r)
		}
	}
	if len(open) == 0 {
		return [3]int64{}, false
	}
	slices.SortFunc(open, func(a, b [3]int64) int { return slices.Compare(a[:], b[:]) })
	return open[n%len(open)], true
}

func (w *windowRun) barrier() {
	w.epochs++
	w.src.Push(append(w.pending, stream.NewBarrier(w.epochs))...)
	w.pending = nil
	pullToBarrier(w.t, w.exec, w.apply)
	if want := w.model(); !maps.Equal(w.out, want) {
		w.t.Fatalf("epoch %d (watermark %d): output\n%v\nwant\n%v", w.epochs, w.wm, w.out, want)
	}
}

func (w *windowRun) apply(c *types.Chunk) {
	for i := range c.Capacity() {
		r := c.Row(i)
		k := [2]int64{r[0].(int64), r[1].(int64)}
		v, _ := r[2].(int64) // sum over no value rows is NULL: 0 here
		if c.Op(i).IsInsert() {
			if _, ok := w.out[k]; ok {
				w.t.Fatalf("insert of existing group %v", k)
			}
			w.out[k] = v
			continue
		}
		if got, ok := w.out[k]; !ok || got != v {
			w.t.Fatalf("delete of %v = %d, which is %d (%v)", k, v, got, ok)
		}
		delete(w.out, k)
	}
}

// model is the expected output: every group with live rows, and with EMIT
// ON WINDOW CLOSE only those of closed windows.
func (w *windowRun) model() map[[2]int64]int64 {
	want := map[[2]int64]int64{}
	for r, c := range w.live {
		if c == 0 || w.onClose && r[0] >= w.wm {
			continue
		}
		k := [2]int64{r[0], r[1]}
		if w.count {
			want[k] += int64(c)
		} else {
			want[k] += r[2] * int64(c)
		}
	}
	return want
}
