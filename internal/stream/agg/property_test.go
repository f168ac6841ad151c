package agg

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// The property input: (g int, v int, s varchar, b bool, d varchar).
var propIn = tsch(i32, i32, str, boo, str)

func propCalls() []plan.AggCall {
	return []plan.AggCall{
		ac(plan.AggCountStar, i64),
		ac(plan.AggCount, i64, 1),
		ac(plan.AggSum, i64, 1),
		ac(plan.AggAvg, dec, 1),
		ac(plan.AggMin, i32, 1),
		ac(plan.AggMax, i32, 1),
		distinct(ac(plan.AggCount, i64, 1)),
		distinct(ac(plan.AggSum, i64, 1)),
		ac(plan.AggBoolAnd, boo, 3),
		ac(plan.AggBoolOr, boo, 3),
		orderBy(ac(plan.AggStringAgg, str, 2, 4), 1, true),
		ac(plan.AggMax, str, 2),
		filterCol(ac(plan.AggCountStar, i64), 3),
		distinct(ac(plan.AggStringAgg, str, 2, 4)),
	}
}

// naive computes the expected output rows, keyed by group key token, from
// scratch over the live rows.
func naive(t *rapid.T, live []types.Row, grouped bool, schema []types.Type) map[string]string {
	byGroup := map[string][]types.Row{}
	if !grouped {
		byGroup[""] = nil
	}
	for _, r := range live {
		k := ""
		if grouped {
			k = types.FormatToken(r[0], i32)
		}
		byGroup[k] = append(byGroup[k], r)
	}
	out := map[string]string{}
	for k, rows := range byGroup {
		var row types.Row
		if grouped {
			row = append(row, rows[0][0])
		}
		row = append(row, naiveCalls(t, rows)...)
		out[k] = types.FormatRow(row, schema)
	}
	return out
}

func naiveCalls(t *rapid.T, rows []types.Row) types.Row {
	var vs, dvs []int64
	seen := map[int64]bool{}
	var bs []bool
	filtered := int64(0)
	for _, r := range rows {
		if r[1] != nil {
			v := r[1].(int64)
			vs = append(vs, v)
			if !seen[v] {
				seen[v] = true
				dvs = append(dvs, v)
			}
		}
		if r[3] != nil {
			bs = append(bs, r[3].(bool))
			if r[3].(bool) {
				filtered++
			}
		}
	}
	sum := func(xs []int64) types.Datum {
		if len(xs) == 0 {
			return nil
		}
		s := int64(0)
		for _, x := range xs {
			s += x
		}
		return s
	}
	var avg types.Datum
	if len(vs) > 0 {
		e := expr.MustBuild(expr.Func("/", expr.Input(0, dec), expr.Input(1, dec)), divTypes)
		d, err := expr.EvalRow(&expr.Context{}, e, types.Row{apd.New(sum(vs).(int64), 0), apd.New(int64(len(vs)), 0)}, divTypes)
		if err != nil {
			t.Fatal(err)
		}
		avg = d
	}
	var mn, mx types.Datum
	for _, v := range vs {
		if mn == nil || v < mn.(int64) {
			mn = v
		}
		if mx == nil || v > mx.(int64) {
			mx = v
		}
	}
	var band, bor types.Datum
	if len(bs) > 0 {
		band, bor = !slices.Contains(bs, false), slices.Contains(bs, true)
	}
	return types.Row{int64(len(rows)), int64(len(vs)), sum(vs), avg, mn, mx, int64(len(dvs)), sum(dvs),
		band, bor, naiveStringAgg(rows), naiveMaxS(rows), filtered, naiveDistinctStringAgg(rows)}
}

// naiveStringAgg is string_agg(s, d ORDER BY v DESC NULLS FIRST), ties in
// key order (s, then d).
func naiveStringAgg(rows []types.Row) types.Datum {
	var rs []types.Row
	for _, r := range rows {
		if r[2] != nil {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b types.Row) int {
		switch {
		case a[1] == nil && b[1] != nil:
			return -1
		case a[1] != nil && b[1] == nil:
			return 1
		}
		if c := types.Compare(b[1], a[1]); c != 0 {
			return c
		}
		return types.CompareRows(types.Row{a[2], a[4]}, types.Row{b[2], b[4]})
	})
	return joinAgg(rs)
}

func naiveDistinctStringAgg(rows []types.Row) types.Datum {
	var rs []types.Row
	for _, r := range rows {
		if r[2] != nil && !slices.ContainsFunc(rs, func(x types.Row) bool { return x[2] == r[2] && x[4] == r[4] }) {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b types.Row) int {
		return types.CompareRows(types.Row{a[2], a[4]}, types.Row{b[2], b[4]})
	})
	return joinAgg(rs)
}

func joinAgg(rs []types.Row) types.Datum {
	if len(rs) == 0 {
		return nil
	}
	var sb strings.Builder
	for i, r := range rs {
		if i > 0 {
			sb.WriteString(r[4].(string))
		}
		sb.WriteString(r[2].(string))
	}
	return sb.String()
}

func naiveMaxS(rows []types.Row) types.Datum {
	var mx types.Datum
	for _, r := range rows {
		if r[2] != nil && (mx == nil || types.Compare(r[2], mx) > 0) {
			mx = r[2]
		}
	}
	return mx
}

func genRow(t *rapid.T) types.Row {
	null := func(label string, d types.Datum) types.Datum {
		if rapid.IntRange(0, 5).Draw(t, label+"null") == 0 {
			return nil
		}
		return d
	}
	return types.Row{
		null("g", int64(rapid.IntRange(0, 3).Draw(t, "g"))),
		null("v", int64(rapid.IntRange(-3, 5).Draw(t, "v"))),
		null("s", rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "s")),
		null("b", rapid.Bool().Draw(t, "b")),
		rapid.SampledFrom([]string{",", ";"}).Draw(t, "d"),
	}
}

// propRun drives an aggregation with random changes, checkpoints and
// crashes, checking after every barrier that its output, applied to a map,
// equals the aggregation computed from scratch.
type propRun struct {
	t       *rapid.T
	store   *storage.Store
	cache   int
	grouped bool
	// appendOnly: only inserts, and the node says so (min and max keep
	// no value table, as plan.MarkAppendOnlyInputs makes them).
	appendOnly bool
	schema     []types.Type
	src        *stream.MockSource
	exec       stream.Executor
	epoch      uint64
	live       []types.Row
	out        map[string]string
	pending    []stream.Message
	builder    *types.Builder
	// sealed is the model as of the last barrier; saved as of the last
	// commit.
	sealed, saved struct {
		live []types.Row
		out  map[string]string
	}
	lastSeal uint64
	// fresh is set while the executor has not passed a barrier since it
	// was built: a simple agg emits its initial row only at the end of its
	// first epoch.
	fresh bool
}

func (p *propRun) node() *plan.Agg {
	var groups []int
	if p.grouped {
		groups = []int{0}
	}
	a := planAgg(propIn, groups, propCalls(), 1)
	if p.appendOnly {
		a.AppendOnlyInput = true
		for i := range a.Calls {
			if k := a.Calls[i].Kind; k == plan.AggMin || k == plan.AggMax {
				a.Calls[i].Table = nil
			}
		}
	}
	return a
}

func (p *propRun) rebuild() {
	p.src = stream.NewMockSource(propIn)
	p.fresh = true
	a, err := NewAgg(testEnv(p.store, p.cache), p.src, p.node())
	if err != nil {
		p.t.Fatal(err)
	}
	p.exec = a
	p.schema = a.Schema()
	p.pending = nil
	p.builder = types.NewBuilder(propIn, 3)
	p.barrier()
}

func (p *propRun) add(op types.Op, r types.Row) {
	if c := p.builder.Append(op, r); c != nil {
		p.pending = append(p.pending, stream.ChunkMsg(c))
	}
}

func (p *propRun) barrier() {
	if c := p.builder.Take(); c != nil {
		p.pending = append(p.pending, stream.ChunkMsg(c))
	}
	p.epoch++
	p.src.Push(append(p.pending, stream.NewBarrier(p.epoch))...)
	p.pending = nil
	pullToBarrier(p.t, p.exec, p.apply)
	p.lastSeal = p.epoch
	p.sealed.live, p.sealed.out = slices.Clone(p.live), maps.Clone(p.out)
	want := naive(p.t, p.live, p.grouped, p.schema)
	if p.fresh && !p.grouped && len(p.out) == 0 {
		want = map[string]string{}
	}
	p.fresh = false
	if !maps.Equal(p.out, want) {
		p.t.Fatalf("epoch %d: output state\n%v\nwant\n%v", p.epoch, p.out, want)
	}
}

func (p *propRun) apply(c *types.Chunk) {
	for i := 0; i < c.Capacity(); i++ {
		r := c.Row(i)
		k := ""
		if p.grouped {
			k = types.FormatToken(r[0], i32)
		}
		text := types.FormatRow(r, p.schema)
		if c.Op(i).IsInsert() {
			if _, ok := p.out[k]; ok {
				p.t.Fatalf("insert of existing group %q", k)
			}
			p.out[k] = text
			continue
		}
		if p.out[k] != text {
			p.t.Fatalf("delete of %q, which is %q", text, p.out[k])
		}
		delete(p.out, k)
	}
}

func (p *propRun) commit() {
	if p.lastSeal <= p.store.CommittedEpoch() {
		return
	}
	if err := p.store.Commit(context.Background(), p.lastSeal, nil); err != nil {
		p.t.Fatal(err)
	}
	p.saved = p.sealed
}

// crash throws away everything uncommitted and rebuilds the executor from
// the committed tables; the model rolls back to the committed epoch.
func (p *propRun) crash() {
	p.store.AbortUncommitted()
	p.live = slices.Clone(p.saved.live)
	p.out = maps.Clone(p.saved.out)
	p.rebuild()
}

func (p *propRun) step() {
	action := rapid.IntRange(0, 9).Draw(p.t, "action")
	if p.appendOnly && action >= 3 && action <= 6 {
		action = 0
	}
	switch action {
	case 0, 1, 2:
		r := genRow(p.t)
		p.live = append(p.live, r)
		p.add(types.Insert, r)
	case 3, 4:
		if len(p.live) > 0 {
			i := rapid.IntRange(0, len(p.live)-1).Draw(p.t, "del")
			p.add(types.Delete, p.live[i])
			p.live = slices.Delete(p.live, i, i+1)
		}
	case 5, 6:
		if len(p.live) > 0 {
			i := rapid.IntRange(0, len(p.live)-1).Draw(p.t, "upd")
			r := genRow(p.t)
			// Keep the pair in one chunk.
			if p.builder.Len() > 1 {
				p.pending = append(p.pending, stream.ChunkMsg(p.builder.Take()))
			}
			p.add(types.UpdateDelete, p.live[i])
			p.add(types.UpdateInsert, r)
			p.live[i] = r
		}
	case 7:
		p.barrier()
	case 8:
		p.commit()
	case 9:
		if rapid.IntRange(0, 3).Draw(p.t, "crash") == 0 {
			p.crash()
		}
	}
}

func TestAggProperty(t *testing.T) { testAggProperty(t, false) }

// TestAggPropertyAppendOnly: over inserts only, min and max kept without
// value tables agree with the aggregation from scratch, across crashes.
func TestAggPropertyAppendOnly(t *testing.T) { testAggProperty(t, true) }

func testAggProperty(t *testing.T, appendOnly bool) {
	for _, cache := range []int{1, 1000} {
		t.Run("cache="+itoa(cache), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				st := streamtest.OpenStore(rt)
				p := &propRun{t: rt, store: st, cache: cache, grouped: rapid.Bool().Draw(rt, "grouped"), out: map[string]string{},
					appendOnly: appendOnly}
				p.saved.out = map[string]string{}
				p.rebuild()
				for range rapid.IntRange(1, 80).Draw(rt, "steps") {
					p.step()
				}
				p.barrier()
			})
		})
	}
}
