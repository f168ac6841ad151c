package compute

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Every actor is a goroutine and every store starts Pebble's; goleak
// checks that teardown really waits for all of them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var i64 = types.TInt64

// events is a fake meta side: it records which actors collected which
// epochs and which actors failed on their own.
type events struct {
	mu        sync.Mutex
	collected map[uint64][]stream.ActorID
	failed    map[stream.ActorID]error
}

func newEvents() *events {
	return &events{collected: map[uint64][]stream.ActorID{}, failed: map[stream.ActorID]error{}}
}

func (e *events) Collect(_ context.Context, actor stream.ActorID, epoch uint64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.collected[epoch] = append(e.collected[epoch], actor)
	return nil
}

func (e *events) ActorFailed(actor stream.ActorID, _ uint64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failed[actor] = err
}

// collectedBy returns the sorted actors that collected epoch.
func (e *events) collectedBy(epoch uint64) []stream.ActorID {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := slices.Clone(e.collected[epoch])
	slices.Sort(out)
	return out
}

func (e *events) failures() map[stream.ActorID]error {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[stream.ActorID]error, len(e.failed))
	for k, v := range e.failed {
		out[k] = v
	}
	return out
}

// harness is a node over an in-memory store; cleanup stops every job
// before the store closes.
type harness struct {
	store *storage.Store
	ev    *events
	node  *Node
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	st, err := storage.Open(context.Background(), storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	h := &harness{store: st, ev: newEvents()}
	h.node = NewNode(st, h.ev, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.node.StopAll(ctx); err != nil {
			t.Error(err)
		}
	})
	return h
}

func (h *harness) deploy(t *testing.T, d Deployment) map[stream.ActorID][]stream.Dispatcher {
	t.Helper()
	ctx := context.Background()
	adds, err := h.node.Prepare(ctx, d)
	if err != nil {
		t.Fatalf("prepare job %d: %v", d.Job.ID, err)
	}
	if err := h.node.Start(ctx, d.Job.ID); err != nil {
		t.Fatalf("start job %d: %v", d.Job.ID, err)
	}
	return adds
}

func (h *harness) inject(t *testing.T, b *stream.Barrier, sources ...stream.ActorID) {
	t.Helper()
	if err := h.node.Inject(b, sources); err != nil {
		t.Fatalf("inject epoch %d: %v", b.Epoch, err)
	}
}

// waitCollected waits until exactly the given actors have collected
// epoch, failing the test after timeout.
func (h *harness) waitCollected(t *testing.T, epoch uint64, want ...stream.ActorID) {
	t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	var got []stream.ActorID
	ok := poll(5*time.Second, func() bool {
		got = h.ev.collectedBy(epoch)
		return slices.Equal(got, want)
	})
	if !ok {
		t.Fatalf("epoch %d collected by %v, want %v (failures: %v)", epoch, got, want, h.ev.failures())
	}
}

// poll calls cond until it holds or timeout passes.
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

func barrier(epoch uint64) *stream.Barrier { return &stream.Barrier{Epoch: epoch, Checkpoint: true} }

// kvRows returns rows (k, 10*k) for k in 1..n.
func kvRows(n int) []types.Row {
	rows := make([]types.Row, n)
	for k := range rows {
		rows[k] = types.Row{int64(k + 1), int64(10 * (k + 1))}
	}
	return rows
}

// valuesNode emits rows of two bigint columns, keyed by the first.
func valuesNode(rows []types.Row) *plan.Node {
	descs := make([][]expr.Desc, len(rows))
	for i, r := range rows {
		for _, d := range r {
			descs[i] = append(descs[i], expr.Literal(d, i64))
		}
	}
	return &plan.Node{Kind: plan.KindValues, Schema: []types.Type{i64, i64}, StreamKey: []int{0},
		Values: &plan.Values{Rows: descs}}
}

// kvTable is a (k bigint PRIMARY KEY, v bigint) table distributed by dist.
func kvTable(id uint32, dist int) plan.Table {
	return plan.Table{ID: id, Types: []types.Type{i64, i64}, PK: []int{0}, DistKey: []int{dist}}
}

func materializeNode(t plan.Table, in *plan.Node) *plan.Node {
	return &plan.Node{Kind: plan.KindMaterialize, Inputs: []*plan.Node{in}, Schema: t.Types, StreamKey: []int{0},
		Materialize: &plan.Materialize{Table: t}}
}

func mergeNode(upstream uint32) *plan.Node {
	return &plan.Node{Kind: plan.KindMerge, Schema: []types.Type{i64, i64}, StreamKey: []int{0},
		Merge: &plan.Merge{UpstreamFragment: upstream}}
}

// valuesToMaterialize is job id: a singleton values fragment (fragment
// 10*id+1, actor 100*id) hash-dispatching on column 0 to a materialize
// fragment (10*id+2, actors 100*id+1 and 100*id+2) writing table.
func valuesToMaterialize(id uint32, rows []types.Row, table plan.Table) Deployment {
	src, mat := 10*id+1, 10*id+2
	job := &plan.Job{ID: id, Fragments: []*plan.Fragment{
		{ID: src, Root: valuesNode(rows), Parallelism: 1, Singleton: true,
			Outputs: []plan.Dispatch{{Kind: plan.DispatchHash, DistKey: []int{0}, Downstream: mat}}},
		{ID: mat, Root: materializeNode(table, mergeNode(src)), Parallelism: 2},
	}}
	return Deployment{Job: job, Actors: map[uint32][]stream.ActorID{
		src: {100 * id},
		mat: {100*id + 1, 100*id + 2},
	}}
}

// singletonView is job id: one fragment (10*id+1, actor 100*id) that
// materializes rows into table directly; later jobs attach to it.
func singletonView(id uint32, rows []types.Row, table plan.Table) Deployment {
	frag := 10*id + 1
	job := &plan.Job{ID: id, Fragments: []*plan.Fragment{
		{ID: frag, Root: materializeNode(table, valuesNode(rows)), Parallelism: 1, Singleton: true},
	}}
	return Deployment{Job: job, Actors: map[uint32][]stream.ActorID{frag: {100 * id}}}
}

// attachedView is job id reading the output of upstream fragment up over a
// no-shuffle edge (as a backfill does) into table: fragment 10*id+1,
// actor 100*id.
func attachedView(id uint32, up uint32, upTable uint32, table plan.Table) Deployment {
	frag := 10*id + 1
	job := &plan.Job{ID: id,
		Fragments: []*plan.Fragment{{ID: frag, Root: materializeNode(table, mergeNode(up)), Parallelism: 1}},
		Upstreams: []plan.UpstreamEdge{{TableID: upTable, UpstreamFragment: up, Downstream: frag, Kind: plan.DispatchNoShuffle}},
	}
	return Deployment{Job: job, Actors: map[uint32][]stream.ActorID{frag: {100 * id}}}
}

// scan returns the committed rows of table.
func (h *harness) scan(t *testing.T, table plan.Table) []types.Row {
	t.Helper()
	snap, err := h.store.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	it, err := snap.ScanTable(context.Background(), storage.TableDesc{ID: table.ID, Types: table.Types, PK: table.PK, DistKey: table.DistKey})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []types.Row
	for {
		row, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		out = append(out, row)
	}
	slices.SortFunc(out, types.CompareRows)
	return out
}

func formatRows(rows []types.Row) string {
	return fmt.Sprint(rows)
}

// ownerOf returns the index of the actor (of two, even vnode ranges) that
// owns a bigint value's vnode.
func ownerOf(v types.Datum) int {
	vnode := codec.VNodeOf(codec.HashRow(types.Row{v}, []types.Type{i64}))
	return stream.EvenVNodeOwners(2)[vnode]
}

// ownersOf counts rows per owning actor of column col.
func ownersOf(rows []types.Row, col int) [2]int {
	var n [2]int
	for _, r := range rows {
		n[ownerOf(r[col])]++
	}
	return n
}
