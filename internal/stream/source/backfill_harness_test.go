package source

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

const (
	bfUpstreamActor = 100
	bfActor         = 5
	bfProgressID    = 31
)

// chanSource is a thread-safe scripted input: the backfill's pump pulls it
// on another goroutine while the test feeds it.
type chanSource struct {
	schema []types.Type
	ch     chan stream.Message
}

func (c *chanSource) Next(ctx context.Context) (stream.Message, error) {
	select {
	case m := <-c.ch:
		return m, nil
	case <-ctx.Done():
		return stream.Message{}, ctx.Err()
	}
}

func (c *chanSource) Schema() []types.Type { return c.schema }

// bfHarness plays the upstream table's materialize (it writes the upstream
// state table and feeds the same changes to the backfill's input), the
// barrier manager (it commits epochs) and the downstream (it applies the
// backfill's output to a multiset, committed with the epochs).
type bfHarness struct {
	t        tb
	store    *storage.Store
	up       plan.Table
	cols     []int
	chunk    int
	throttle *stream.Throttle

	upTable *storage.StateTable
	in      *chanSource
	bf      *Backfill
	g       *task.Group
	gctx    context.Context
	cancel  context.CancelFunc

	epoch            uint64
	model, modelC    map[string]types.Row // upstream table by pk text; C = committed
	out, outC        map[string]int       // backfill output multiset; C = committed
	pendingChanges   []stream.Message     // fed but not sealed (a crash loses them)
	committedScanned int64
}

func newBFHarness(t tb, up plan.Table, cols []int, chunk int) *bfHarness {
	h := &bfHarness{t: t, store: streamtest.OpenStore(t), up: up, cols: cols, chunk: chunk, throttle: stream.NewThrottle(),
		model: map[string]types.Row{}, out: map[string]int{}}
	h.openUpstream()
	return h
}

func (h *bfHarness) openUpstream() {
	var err error
	h.upTable, err = h.store.OpenTable(storage.TableDesc(h.up), bfUpstreamActor, nil)
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *bfHarness) pkText(row types.Row) string {
	var pk types.Row
	for _, c := range h.up.PK {
		pk = append(pk, row[c])
	}
	return rowKey(pk)
}

// write applies one change to the upstream table and the model.
func (h *bfHarness) write(op types.Op, row types.Row) {
	var err error
	if op.IsInsert() {
		err = h.upTable.Insert(row)
		h.model[h.pkText(row)] = row
	} else {
		err = h.upTable.Delete(row)
		delete(h.model, h.pkText(row))
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// seal seals the upstream writes of the open epoch and passes the barrier
// to the backfill's input.
func (h *bfHarness) sealAndBarrier(checkpoint bool) {
	h.epoch++
	if err := h.upTable.Seal(h.epoch); err != nil {
		h.t.Fatal(err)
	}
	h.in.ch <- stream.BarrierMsg(&stream.Barrier{Epoch: h.epoch, Checkpoint: checkpoint})
}

// start builds the backfill (again, after a crash) and passes its first
// barrier.
func (h *bfHarness) start() {
	h.in = &chanSource{schema: h.up.Types, ch: make(chan stream.Message, 1<<12)}
	parent, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.g, h.gctx = task.NewGroup(parent)
	h.cancel = cancel
	env := &stream.Env{Store: h.store, ActorID: bfActor, ChunkSize: h.chunk, Throttle: h.throttle}
	n := &plan.Node{Kind: plan.KindBackfill, Inputs: []*plan.Node{{}},
		Backfill: &plan.Backfill{Upstream: h.up, Columns: h.cols, ProgressTable: ProgressTable(bfProgressID)}}
	ex, err := Build(env, h.g, n, []stream.Executor{h.in})
	if err != nil {
		h.t.Fatal(err)
	}
	h.bf = ex.(*Backfill)
	h.sealAndBarrier(true)
	h.pullThroughBarrier(true)
}

// stop cancels the backfill's goroutines, waits for them and releases
// the backfill's snapshot, as the compute node does.
func (h *bfHarness) stop() {
	h.g.Cancel()
	_ = h.g.Wait()
	h.cancel()
	h.bf.Release()
}

// pullThroughBarrier pulls until the barrier of h.epoch comes out, applying
// chunks to the output, then commits the epoch if asked.
func (h *bfHarness) pullThroughBarrier(commitIt bool) {
	for {
		m, err := h.bf.Next(h.gctx)
		if err != nil {
			h.t.Fatalf("backfill next: %v", err)
		}
		if m.Barrier == nil {
			h.apply(m)
			continue
		}
		if m.Barrier.Epoch != h.epoch {
			h.t.Fatalf("barrier %d, want %d", m.Barrier.Epoch, h.epoch)
		}
		break
	}
	if commitIt {
		commit(h.t, h.store, h.epoch)
		h.modelC, h.outC = maps(h.model), mapsInt(h.out)
		h.committedScanned, _ = h.bf.Progress()
	}
}

// pullBriefly pulls for a moment, for crashes in the middle of an epoch.
func (h *bfHarness) pullBriefly(n int) {
	for range n {
		ctx, cancel := context.WithTimeout(h.gctx, 5*time.Millisecond)
		m, err := h.bf.Next(ctx)
		cancel()
		if err != nil {
			return
		}
		if m.Barrier != nil {
			h.t.Fatalf("unexpected barrier %v", m.Barrier)
		}
		h.apply(m)
	}
}

// apply adds a backfill output chunk to the output multiset. Every output
// row includes the upstream pk, so a row may be in the multiset at most
// once: inserting a present row is a duplicate, deleting an absent one a
// gap.
func (h *bfHarness) apply(m stream.Message) {
	if m.Chunk == nil {
		h.t.Fatalf("unexpected message %v", m)
	}
	c := m.Chunk
	for i := range c.Capacity() {
		if !c.Visible(i) {
			continue
		}
		k := rowKey(c.Row(i))
		if c.Op(i).IsInsert() {
			if h.out[k] > 0 {
				h.t.Fatalf("duplicate row %s (epoch %d)", k, h.epoch)
			}
			h.out[k]++
			continue
		}
		if h.out[k] == 0 {
			h.t.Fatalf("delete of absent row %s (epoch %d)", k, h.epoch)
		}
		h.out[k]--
		if h.out[k] == 0 {
			delete(h.out, k)
		}
	}
}

// crash drops everything uncommitted, as recovery does, and rebuilds.
func (h *bfHarness) crash() {
	h.stop()
	h.store.AbortUncommitted()
	h.openUpstream()
	h.model, h.out = maps(h.modelC), mapsInt(h.outC)
	h.start()
	if got, _ := h.bf.Progress(); got != h.committedScanned {
		h.t.Fatalf("scanned %d after recovery, committed %d", got, h.committedScanned)
	}
}

// checkOutput compares the output with the upstream table, projected.
func (h *bfHarness) checkOutput() {
	want := map[string]int{}
	for _, row := range h.model {
		want[rowKey(project(row, h.cols))]++
	}
	if !mapsEqual(want, h.out) {
		h.t.Fatalf("backfill output differs from the table:\n got %v\nwant %v", sortedKeys(h.out), sortedKeys(want))
	}
}

func maps(m map[string]types.Row) map[string]types.Row {
	out := make(map[string]types.Row, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mapsInt(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]int) string {
	var ks []string
	for k, v := range m {
		ks = append(ks, fmt.Sprintf("%s×%d", k, v))
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

func rowKey(r types.Row) string { return fmt.Sprint([]any(r)) }
