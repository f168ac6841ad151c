package agg

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// appendOnlyAgg is planAgg as the planner leaves an aggregation over an
// input that only inserts: min and max keep their extreme, no table.
func appendOnlyAgg(in []types.Type, groupKeys []int, calls []plan.AggCall, base uint32) *plan.Agg {
	a := planAgg(in, groupKeys, calls, base)
	a.AppendOnlyInput = true
	for i := range a.Calls {
		if k := a.Calls[i].Kind; k == plan.AggMin || k == plan.AggMax {
			a.Calls[i].Table = nil
		}
	}
	return a
}

// TestLocalAggMatchesOnePhase: over random inserts (NULLs included, and
// equal numerics of different scales, whose latest spelling a kept
// extreme shows) cut into random chunks and epochs, with watermarks on a
// group key and on another column, a local aggregation followed by the hash aggregation
// plan.SplitLocalAggs makes of the original emits exactly what the
// original emits alone, barrier by barrier, with a tiny cache and a large
// one.
func TestLocalAggMatchesOnePhase(t *testing.T) {
	in := tsch(i64, i64, str, i64, dec)
	calls := []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggCount, i64, 1), ac(plan.AggMin, i64, 1),
		ac(plan.AggMax, str, 2), ac(plan.AggMax, i64, 1), ac(plan.AggCount, i64, 2), ac(plan.AggMin, dec, 4),
		ac(plan.AggMax, dec, 4)}
	// The window column twice, as GROUP BY w, k, w: its watermark
	// reaches both output columns. Two bigint keys, or one, take the
	// local aggregation's integer index, unless a chunk holds a NULL
	// key (v may be NULL).
	groupSets := [][]int{{3, 0, 3}, {3, 0}, {1, 3}, {1}, {0}}
	rapid.Check(t, func(rt *rapid.T) {
		groups := rapid.SampledFrom(groupSets).Draw(rt, "groups")
		text := localScript(rt)
		cache := rapid.SampledFrom([]int{1, 1000}).Draw(rt, "cache")
		st := streamtest.OpenStore(t)
		whole, err := NewAgg(testEnv(st, cache), stream.NewMockSource(in, script(in, text, 1)...),
			appendOnlyAgg(in, groups, cloneCalls(calls), 1))
		if err != nil {
			rt.Fatal(err)
		}
		want := drainMarks(t, whole)

		n := &plan.Node{Kind: plan.KindHashAgg, Inputs: []*plan.Node{{Kind: plan.KindConnectorSource, Schema: in,
			AppendOnly: true, Connector: &plan.ConnectorSource{}}}, Agg: &plan.Agg{GroupKeys: groups,
			Calls: cloneCalls(calls), AppendOnlyInput: true}}
		plan.SplitLocalAggs(n)
		ln := n.Inputs[0]
		if ln.Kind != plan.KindLocalAgg {
			rt.Fatalf("not split: %s", ln.Kind)
		}
		local, err := newLocalAgg(stream.NewMockSource(in, script(in, text, 1)...), ln.LocalAgg)
		if err != nil {
			rt.Fatal(err)
		}
		st2 := streamtest.OpenStore(t)
		global, err := NewAgg(testEnv(st2, cache), local, appendOnlyAgg(ln.Schema, n.Agg.GroupKeys, n.Agg.Calls, 1))
		if err != nil {
			rt.Fatal(err)
		}
		if got := drainMarks(t, global); got != want {
			rt.Fatalf("script:\n%s\ntwo-phase:\n%s\none-phase:\n%s", text, got, want)
		}
	})
}

// drainMarks is drain with the watermarks too.
func drainMarks(t *testing.T, e stream.Executor) string {
	var sb strings.Builder
	for _, msg := range streamtest.PullUntilStop(context.Background(), t, e, testActor) {
		switch {
		case msg.Chunk != nil:
			sb.WriteString(msg.Chunk.String())
		case msg.Barrier != nil:
			sb.WriteString("barrier\n")
		case msg.Watermark != nil:
			fmt.Fprintf(&sb, "watermark %d %v\n", msg.Watermark.Col, msg.Watermark.Value)
		}
	}
	return sb.String()
}

// localScript draws rows (k, v, s, w) with few distinct keys, NULLs, chunk
// boundaries, barriers and watermarks on w (a group key) and on v. Like
// a source's, the watermarks hold: no row follows one that it is below
// (a group below a watermark on the first group key is final, and is
// finished as the watermark arrives).
func localScript(rt *rapid.T) string {
	var b strings.Builder
	w, vw := int64(0), int64(-5)
	for range rapid.IntRange(1, 40).Draw(rt, "steps") {
		switch rapid.IntRange(0, 9).Draw(rt, "step") {
		case 0:
			b.WriteString("barrier\n")
		case 1:
			b.WriteString("chunk\n")
		case 2:
			w += rapid.Int64Range(0, 2).Draw(rt, "advance")
			fmt.Fprintf(&b, "watermark 3 %d\n", w)
		case 3:
			vw += rapid.Int64Range(0, 2).Draw(rt, "vadvance")
			fmt.Fprintf(&b, "watermark 1 %d\n", vw)
		default:
			v := "NULL"
			if !rapid.Bool().Draw(rt, "vnull") {
				v = fmt.Sprint(vw + rapid.Int64Range(0, 5).Draw(rt, "v"))
			}
			s := rapid.SampledFrom([]string{"NULL", "a", "b", "zz"}).Draw(rt, "s")
			d := rapid.SampledFrom([]string{"NULL", "1.0", "1.00", "1", "-2.5", "-2.50"}).Draw(rt, "d")
			fmt.Fprintf(&b, "+ %d %s %s %d %s\n", rapid.Int64Range(0, 3).Draw(rt, "k"), v, s,
				w+rapid.Int64Range(0, 2).Draw(rt, "w"), d)
		}
	}
	b.WriteString("stop\n")
	return b.String()
}
