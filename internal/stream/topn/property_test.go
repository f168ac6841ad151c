package topn

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"pgregory.net/rapid"
)

// propSchema is (k, g, v, w): k is the stream key, g the group, v and w the
// ORDER BY columns; small domains make ties and NULLs common.
var propSchema = []types.Type{types.TInt64, types.TInt64, types.TInt64, types.TInt64}

// driver feeds random epochs to an executor and checks, at every barrier,
// that its output applied to a multiset is the from-scratch top-N of the
// rows inserted and not deleted so far.
type driver struct {
	tn        *plan.TopN
	chunkSize int
	live      map[int64]types.Row
	nextK     int64
	epoch     uint64
	src       *stream.MockSource
	exec      stream.Executor
	out       multiset
}

// drawTopN draws a node shape: grouped or not, one or two ORDER BY items
// with random directions and NULL placement, offset, limit, ties.
func drawTopN(t *rapid.T) *plan.TopN {
	tn := &plan.TopN{Limit: int64(rapid.IntRange(-1, 4).Draw(t, "limit"))}
	if rapid.Bool().Draw(t, "offset?") {
		tn.Offset = int64(rapid.IntRange(1, 3).Draw(t, "offset"))
	}
	if rapid.Bool().Draw(t, "grouped") {
		tn.GroupKeys = []int{1}
	}
	n := rapid.IntRange(1, 2).Draw(t, "orderItems")
	for c := 2; c < 2+n; c++ {
		o := codec.Order{Desc: rapid.Bool().Draw(t, "desc"), NullsFirst: rapid.Bool().Draw(t, "nullsFirst")}
		tn.OrderBy = append(tn.OrderBy, plan.ColumnOrder{Column: c, Order: o})
	}
	tn.WithTies = tn.Limit >= 0 && rapid.Bool().Draw(t, "ties")
	tn.Table = tableFor(propSchema, tn.GroupKeys, tn.OrderBy, []int{0})
	return tn
}

func drawConfig(t *rapid.T) config {
	if rapid.Bool().Draw(t, "tinyCache") {
		return config{chunkSize: rapid.IntRange(1, 4).Draw(t, "chunk"), groups: 1, high: rapid.IntRange(0, 1).Draw(t, "high")}
	}
	return config{chunkSize: 1024, groups: 64, high: 64}
}

// buildFunc builds the executor under test over a source.
type buildFunc func(src stream.Executor) (stream.Executor, error)

func newDriver(t *rapid.T, tn *plan.TopN, chunkSize int, build buildFunc) *driver {
	d := &driver{tn: tn, chunkSize: chunkSize, live: make(map[int64]types.Row), out: make(multiset)}
	d.start(t, build, 1)
	return d
}

// start builds a fresh executor whose first barrier is epoch.
func (d *driver) start(t *rapid.T, build buildFunc, epoch uint64) {
	d.epoch = epoch
	d.src = stream.NewMockSource(propSchema, stream.NewBarrier(epoch))
	exec, err := build(d.src)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	d.exec = stream.Checked("topn", exec)
}

// memBuild builds over an in-memory table with the given cache shape.
func memBuild(tn *plan.TopN, cfg config) buildFunc { return memBuildOn(tn, cfg, newMemTable(tn.Table)) }

func memBuildOn(tn *plan.TopN, cfg config, mt *memTable) buildFunc {
	return func(src stream.Executor) (stream.Executor, error) {
		lay, sp, err := validate(topNNode(propSchema, tn), propSchema)
		if err != nil {
			return nil, err
		}
		return newExecutor(src, mt, lay, sp, cfg), nil
	}
}

// checkKept: over an append-only input with a limit, the table holds
// just each group's rows ranked before the offset and its output.
func (d *driver) checkKept(t *rapid.T, mt *memTable) {
	if !d.tn.AppendOnlyInput || d.tn.Limit <= 0 {
		return
	}
	sizes := map[types.Datum]int{}
	for _, r := range d.live {
		if len(d.tn.GroupKeys) > 0 {
			sizes[r[1]]++
		} else {
			sizes[nil]++
		}
	}
	want := len(naiveTopN(d.liveRows(), d.tn, []int{0}))
	for _, n := range sizes {
		want += min(n, int(d.tn.Offset))
	}
	if len(mt.rows) != want {
		t.Fatalf("epoch %d: the table holds %d rows, want %d (the offset rows and the output)", d.epoch, len(mt.rows), want)
	}
}

// storeBuild builds through Build, over the store in env.
func storeBuild(env *stream.Env, tn *plan.TopN) buildFunc {
	return func(src stream.Executor) (stream.Executor, error) {
		return Build(env, nil, topNNode(propSchema, tn), []stream.Executor{src})
	}
}

func (d *driver) drawRow(t *rapid.T, k int64) types.Row {
	val := func(name string) types.Datum {
		v := rapid.IntRange(-1, 3).Draw(t, name)
		if v < 0 {
			return nil
		}
		return int64(v)
	}
	return types.Row{k, int64(rapid.IntRange(0, 2).Draw(t, "g")), val("v"), val("w")}
}

// drawChunk draws inserts, deletes and update pairs of live rows.
func (d *driver) drawChunk(t *rapid.T) *types.Chunk {
	b := types.NewBuilder(propSchema, 1024)
	for range rapid.IntRange(1, 8).Draw(t, "rows") {
		keys := make([]int64, 0, len(d.live))
		for k := range d.live {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		op := rapid.IntRange(0, 2).Draw(t, "op")
		if len(keys) == 0 || op == 0 || d.tn.AppendOnlyInput {
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

// runEpoch feeds one epoch's chunks and its barrier, applies the output
// and checks it against the model.
func (d *driver) runEpoch(t *rapid.T) {
	for range rapid.IntRange(0, 3).Draw(t, "chunks") {
		d.src.Push(stream.ChunkMsg(d.drawChunk(t)))
	}
	d.epoch++
	d.src.Push(stream.NewBarrier(d.epoch))
	if err := d.drain(); err != nil {
		t.Fatal(err)
	}
	d.check(t)
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
		if msg.Chunk.Cardinality() > d.chunkSize {
			return fmt.Errorf("chunk of %d rows over the size %d", msg.Chunk.Cardinality(), d.chunkSize)
		}
		if err := d.out.apply(msg.Chunk); err != nil {
			return err
		}
	}
}

func (d *driver) liveRows() []types.Row {
	rows := make([]types.Row, 0, len(d.live))
	for _, r := range d.live {
		rows = append(rows, r)
	}
	return rows
}

func (d *driver) check(t *rapid.T) {
	want := sortedRows(naiveTopN(d.liveRows(), d.tn, []int{0}), propSchema)
	got := d.out.sorted()
	if !slices.Equal(got, want) {
		t.Fatalf("epoch %d: output\n%q\nwant\n%q", d.epoch, got, want)
	}
}

func (d *driver) stop(t *rapid.T) {
	d.epoch++
	d.src.Push(stream.NewStopBarrier(d.epoch, testActor))
	if err := d.drain(); err != nil {
		t.Fatal(err)
	}
}

func TestPropertyMemTable(t *testing.T) { testPropertyMemTable(t, false) }

// TestPropertyAppendOnly: over inserts only, a top-N that stores only the
// rows it may still emit gives the same output.
func TestPropertyAppendOnly(t *testing.T) { testPropertyMemTable(t, true) }

func testPropertyMemTable(t *testing.T, appendOnly bool) {
	rapid.Check(t, func(t *rapid.T) {
		tn := drawTopN(t)
		tn.AppendOnlyInput = appendOnly
		cfg := drawConfig(t)
		mt := newMemTable(tn.Table)
		d := newDriver(t, tn, cfg.chunkSize, memBuildOn(tn, cfg, mt))
		for range rapid.IntRange(1, 12).Draw(t, "epochs") {
			d.runEpoch(t)
			d.checkKept(t, mt)
		}
		d.stop(t)
	})
}

// drawEnv draws a store-backed Env with a tiny or a roomy cache.
func drawEnv(t *rapid.T, store *storage.Store) *stream.Env {
	return &stream.Env{
		Store:        store,
		ActorID:      testActor,
		ChunkSize:    rapid.SampledFrom([]int{2, 1024}).Draw(t, "chunkSize"),
		CacheEntries: rapid.SampledFrom([]int{1, 2, 1 << 16}).Draw(t, "cacheEntries"),
	}
}

// TestPropertyRecovery runs random epochs through Build over a real store,
// commits some of them, and now and then crashes: the uncommitted state is
// aborted and a fresh executor is built on the committed state alone. The
// downstream recovers to the same epoch, so its view is reset to the
// top-N of the committed input; from there the output must stay right.
func TestPropertyRecovery(t *testing.T) { testPropertyRecovery(t, false) }

// TestPropertyRecoveryAppendOnly: a top-N storing only what it may still
// emit recovers to the top-N of the committed rows.
func TestPropertyRecoveryAppendOnly(t *testing.T) { testPropertyRecovery(t, true) }

func testPropertyRecovery(t *testing.T, appendOnly bool) {
	rapid.Check(t, func(t *rapid.T) {
		store := streamtest.OpenStore(t)
		tn := drawTopN(t)
		tn.AppendOnlyInput = appendOnly
		env := drawEnv(t, store)
		d := newDriver(t, tn, env.ChunkSize, storeBuild(env, tn))
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
				d.out = make(multiset)
				for _, r := range naiveTopN(d.liveRows(), tn, []int{0}) {
					d.out[types.FormatRow(r, propSchema)]++
				}
				d.start(t, storeBuild(env, tn), d.epoch+1)
			}
		}
		d.stop(t)
	})
}
