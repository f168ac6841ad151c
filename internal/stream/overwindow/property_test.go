package overwindow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"github.com/sluice-db/sluice/internal/window"
	"pgregory.net/rapid"
)

// schema is (k, g, v, w): k the stream key, g the partition, v the ORDER
// BY column (small values and NULLs, so peers are common), w a value.
var schema = []types.Type{types.TInt64, types.TInt64, types.TInt64, types.TInt64}

const testActor stream.ActorID = 3

// callPool holds calls of every reach: unbounded forward (ranks, running
// counts), bounded either way (lag, lead, sliding frames), backward only,
// and whole-partition (percent_rank).
var callPool = []plan.WindowCall{
	{Kind: plan.WindowRowNumber, Type: types.TInt64},
	{Kind: plan.WindowRank, Type: types.TInt64},
	{Kind: plan.WindowDenseRank, Type: types.TInt64},
	{Kind: plan.WindowPercentRank, Type: types.TFloat64},
	{Kind: plan.WindowLag, Args: []int{3}, Offset: 1, Type: types.TInt64},
	{Kind: plan.WindowLead, Args: []int{3, 0}, Offset: 2, Type: types.TInt64},
	{Kind: plan.WindowAgg, Agg: plan.AggCountStar, Frame: plan.DefaultFrame, Type: types.TInt64},
	{Kind: plan.WindowAgg, Agg: plan.AggSum, Args: []int{3}, Type: types.TDecimal,
		Frame: plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.OffsetPreceding, Offset: 2}, End: plan.FrameBound{Kind: plan.CurrentRow}}},
	{Kind: plan.WindowFirstValue, Args: []int{3}, Type: types.TInt64,
		Frame: plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.OffsetPreceding, Offset: 1}, End: plan.FrameBound{Kind: plan.OffsetFollowing, Offset: 1}}},
	{Kind: plan.WindowLastValue, Args: []int{3}, Type: types.TInt64,
		Frame: plan.Frame{Start: plan.FrameBound{Kind: plan.CurrentRow}, End: plan.FrameBound{Kind: plan.UnboundedFollowing}}},
	{Kind: plan.WindowAgg, Agg: plan.AggMin, Args: []int{3}, Type: types.TInt64,
		Frame: plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.OffsetFollowing, Offset: 1}, End: plan.FrameBound{Kind: plan.OffsetFollowing, Offset: 3}}},
	{Kind: plan.WindowAgg, Agg: plan.AggMax, Args: []int{3}, Type: types.TInt64,
		Frame: plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.OffsetPreceding, Offset: 3}, End: plan.FrameBound{Kind: plan.OffsetPreceding, Offset: 1}}},
	{Kind: plan.WindowAgg, Agg: plan.AggAvg, Args: []int{3}, Type: types.TDecimal,
		Frame: plan.Frame{Start: plan.FrameBound{Kind: plan.CurrentRow}, End: plan.FrameBound{Kind: plan.CurrentRow}}},
}

// drawNode draws a partitioned or global window with a few calls.
func drawNode(t *rapid.T) *plan.Node {
	calls := rapid.SliceOfNDistinct(rapid.IntRange(0, len(callPool)-1), 1, 3, rapid.ID[int]).Draw(t, "calls")
	w := &plan.OverWindow{OrderBy: []plan.ColumnOrder{{Column: 2, Order: codec.Order{
		Desc: rapid.Bool().Draw(t, "desc"), NullsFirst: rapid.Bool().Draw(t, "nullsFirst")}}}}
	if rapid.Bool().Draw(t, "partitioned") {
		w.PartitionBy = []int{1}
	}
	out := slices.Clone(schema)
	for _, i := range calls {
		w.Calls = append(w.Calls, callPool[i])
		out = append(out, callPool[i].Type)
	}
	pk := append(slices.Clone(w.PartitionBy), 2, 0)
	orders := make([]codec.Order, len(pk))
	orders[len(w.PartitionBy)] = w.OrderBy[0].Order
	w.Table = plan.Table{ID: 9, Types: schema, PK: pk, Orders: orders, DistKey: slices.Clone(w.PartitionBy)}
	in := &plan.Node{Kind: plan.KindValues, Schema: schema, StreamKey: []int{0}}
	return &plan.Node{Kind: plan.KindOverWindow, Inputs: []*plan.Node{in}, Schema: out, OverWindow: w}
}

// driver feeds random epochs and checks, at every barrier, that the
// output applied to a multiset is the windows computed afresh over the
// live rows.
type driver struct {
	node  *plan.Node
	env   *stream.Env
	live  map[int64]types.Row
	nextK int64
	epoch uint64
	src   *stream.MockSource
	exec  stream.Executor
	out   map[string]int
}

func (d *driver) start(t *rapid.T, epoch uint64) {
	d.epoch = epoch
	d.src = stream.NewMockSource(schema, stream.NewBarrier(epoch))
	exec, err := Build(d.env, nil, d.node, []stream.Executor{d.src})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	d.exec = stream.Checked("overwindow", exec)
}

func (d *driver) drawRow(t *rapid.T, k int64) types.Row {
	val := func(name string, hi int) types.Datum {
		if v := rapid.IntRange(-1, hi).Draw(t, name); v >= 0 {
			return int64(v)
		}
		return nil
	}
	return types.Row{k, int64(rapid.IntRange(0, 1).Draw(t, "g")), val("v", 4), val("w", 9)}
}

func (d *driver) drawChunk(t *rapid.T) *types.Chunk {
	b := types.NewBuilder(schema, 1024)
	for range rapid.IntRange(1, 6).Draw(t, "rows") {
		keys := slices.Sorted(maps.Keys(d.live))
		op := rapid.IntRange(0, 2).Draw(t, "op")
		if len(keys) == 0 || op == 0 {
			d.nextK++
			r := d.drawRow(t, d.nextK)
			d.live[d.nextK] = r
			b.Append(types.Insert, r)
			continue
		}
		k := rapid.SampledFrom(keys).Draw(t, "victim")
		old := d.live[k]
		if op == 1 {
			delete(d.live, k)
			b.Append(types.Delete, old)
			continue
		}
		r := d.drawRow(t, k)
		d.live[k] = r
		b.Append(types.UpdateDelete, old)
		b.Append(types.UpdateInsert, r)
	}
	return b.Take()
}

func (d *driver) runEpoch(t *rapid.T) {
	for range rapid.IntRange(0, 3).Draw(t, "chunks") {
		d.src.Push(stream.ChunkMsg(d.drawChunk(t)))
	}
	d.epoch++
	d.src.Push(stream.NewBarrier(d.epoch))
	if err := d.drain(); err != nil {
		t.Fatal(err)
	}
	if got, want := d.sortedOut(), d.model(t); !slices.Equal(got, want) {
		t.Fatalf("epoch %d: output\n%q\nwant\n%q", d.epoch, got, want)
	}
}

func (d *driver) drain() error {
	for {
		msg, err := d.exec.Next(context.Background())
		if errors.Is(err, stream.ErrScriptEnd) {
			return nil
		}
		if err != nil {
			return err
		}
		if msg.Chunk == nil {
			continue
		}
		if msg.Chunk.Cardinality() > d.env.ChunkSizeOrDefault() {
			return fmt.Errorf("chunk of %d rows over the size %d", msg.Chunk.Cardinality(), d.env.ChunkSizeOrDefault())
		}
		for _, i := range msg.Chunk.VisibleIndices() {
			k := types.FormatRow(msg.Chunk.Row(i), d.node.Schema)
			if msg.Chunk.Op(i).IsInsert() {
				d.out[k]++
			} else if d.out[k]--; d.out[k] < 0 {
				return fmt.Errorf("delete of a row not emitted: %s", k)
			} else if d.out[k] == 0 {
				delete(d.out, k)
			}
		}
	}
}

func (d *driver) sortedOut() []string {
	var out []string
	for k, n := range d.out {
		for range n {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// model computes every live row's values afresh: partitions sorted by
// the ORDER BY then the key, as the table orders them.
func (d *driver) model(t *rapid.T) []string {
	w := d.node.OverWindow
	parts := map[int64][]types.Row{}
	for _, r := range d.live {
		g := int64(0)
		if len(w.PartitionBy) > 0 {
			g = r[1].(int64)
		}
		parts[g] = append(parts[g], r)
	}
	ev, err := window.New(w.Calls, &expr.Context{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rows := range parts {
		o := w.OrderBy[0].Order
		slices.SortFunc(rows, func(a, b types.Row) int {
			return cmp.Or(compareNullable(a[2], b[2], o), cmp.Compare(a[0].(int64), b[0].(int64)))
		})
		p := rowsPartition{rows}
		vals, err := ev.Eval(p, 0, len(rows))
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			out = append(out, types.FormatRow(append(slices.Clip(r), vals[i]...), d.node.Schema))
		}
	}
	slices.Sort(out)
	return out
}

func compareNullable(a, b types.Datum, o codec.Order) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil || b == nil:
		if (a == nil) == o.NullsFirst {
			return -1
		}
		return 1
	}
	c := cmp.Compare(a.(int64), b.(int64))
	if o.Desc {
		return -c
	}
	return c
}

type rowsPartition struct{ rows []types.Row }

func (p rowsPartition) Len() int            { return len(p.rows) }
func (p rowsPartition) Row(i int) types.Row { return p.rows[i] }
func (p rowsPartition) Peers(i, j int) bool {
	return compareNullable(p.rows[i][2], p.rows[j][2], codec.Order{}) == 0
}

// TestPropertyRecovery runs random epochs through Build over a real
// store, with tiny chunks and caches or roomy ones; now and then it
// commits, and now and then it crashes: uncommitted state is aborted and
// a fresh executor is built on the committed state, with the downstream
// reset to the windows of the committed input.
func TestPropertyRecovery(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		store := streamtest.OpenStore(t)
		d := &driver{node: drawNode(t), live: map[int64]types.Row{}, out: map[string]int{}, env: &stream.Env{
			Store: store, ActorID: testActor,
			ChunkSize:    rapid.SampledFrom([]int{1, 2, 1024}).Draw(t, "chunkSize"),
			CacheEntries: rapid.SampledFrom([]int{1, 4, 1 << 16}).Draw(t, "cacheEntries"),
		}}
		d.start(t, 1)
		committed := maps.Clone(d.live)
		for range rapid.IntRange(1, 12).Draw(t, "epochs") {
			d.runEpoch(t)
			switch rapid.IntRange(0, 3).Draw(t, "then") {
			case 1:
				if err := store.Commit(context.Background(), d.epoch, nil); err != nil {
					t.Fatalf("commit: %v", err)
				}
				committed = maps.Clone(d.live)
			case 2:
				store.AbortUncommitted()
				d.live = maps.Clone(committed)
				d.out = map[string]int{}
				for _, r := range d.model(t) {
					d.out[r]++
				}
				d.start(t, d.epoch+1)
			}
		}
		d.epoch++
		d.src.Push(stream.NewStopBarrier(d.epoch, testActor))
		if err := d.drain(); err != nil {
			t.Fatal(err)
		}
	})
}
