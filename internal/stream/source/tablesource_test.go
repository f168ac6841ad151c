package source

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

const (
	srcTableID  = 7
	srcOffsetID = 8
	srcActor    = 3
)

var srcSchema = []types.Type{types.TInt64, types.TVarchar}

// tb is what the helpers need from *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
}

// srcHarness drives a TableSource: it owns the barrier inbox and the
// throttle, and can rebuild the source on the same store ("crash").
type srcHarness struct {
	store *storage.Store
	inbox chan *stream.Barrier
	thr   *stream.Throttle
	chunk int
	src   *TableSource
	// freshRows builds the source with plan.TableSource.FreshRows.
	freshRows bool
}

func newSrcHarness(t tb, store *storage.Store, chunk int) *srcHarness {
	h := &srcHarness{store: store, thr: stream.NewThrottle(), chunk: chunk}
	h.rebuild(t)
	return h
}

func (h *srcHarness) rebuild(t tb) {
	t.Helper()
	h.inbox = make(chan *stream.Barrier, 16)
	env := &stream.Env{Store: h.store, ActorID: srcActor, Throttle: h.thr, ChunkSize: h.chunk, Barriers: h.inbox}
	n := &plan.Node{Kind: plan.KindTableSource, Schema: srcSchema,
		TableSource: &plan.TableSource{TableID: srcTableID, OffsetTable: OffsetTable(srcOffsetID), FreshRows: h.freshRows}}
	ex, err := Build(env, nil, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.src = ex.(*TableSource)
}

func (h *srcHarness) barrier(epoch uint64) {
	h.inbox <- &stream.Barrier{Epoch: epoch, Checkpoint: true}
}

func appendDML(t tb, store *storage.Store, text string) {
	t.Helper()
	b, err := EncodeDML(types.MustParseChunk(srcSchema, text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendDML(context.Background(), srcTableID, b); err != nil {
		t.Fatal(err)
	}
}

// next pulls one message, failing the test if it takes over 5 s.
func next(t tb, ex stream.Executor) stream.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := ex.Next(ctx)
	if err != nil {
		t.Fatalf("next: %v", err)
	}
	return m
}

// expectIdle checks that Next has nothing to return for a short while.
func expectIdle(t tb, ex stream.Executor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if m, err := ex.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expected no message, got %v, %v", m, err)
	}
}

// expectCancelUnblocks calls ex.Next under a child of parent, cancels it
// while Next waits, and checks that Next returns context.Canceled promptly.
func expectCancelUnblocks(t tb, parent context.Context, ex stream.Executor, what string) {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	errc := make(chan error, 1)
	go func() {
		_, err := ex.Next(ctx)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: err = %v", what, err)
		}
	case <-time.After(time.Second):
		t.Fatalf("%s: Next ignored cancellation", what)
	}
}

func expectText(t tb, m stream.Message, want string) {
	t.Helper()
	got := strings.TrimSpace(m.String())
	if got != strings.TrimSpace(want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func committedPos(t tb, store *storage.Store) logPos {
	t.Helper()
	sn, err := store.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	row, ok, err := sn.Get(context.Background(), storage.TableDesc(OffsetTable(srcOffsetID)), types.Row{split})
	if err != nil || !ok {
		t.Fatalf("no committed offset: %v", err)
	}
	p, err := posOfRow(row)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func commit(t tb, store *storage.Store, epoch uint64) {
	t.Helper()
	if err := store.Commit(context.Background(), epoch, nil); err != nil {
		t.Fatal(err)
	}
}

func TestTableSourceInterleavesBarriers(t *testing.T) {
	store := streamtest.OpenStore(t)
	h := newSrcHarness(t, store, 4)
	appendDML(t, store, "+ 1 'a'")
	// No data before the first barrier.
	expectIdle(t, h.src)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	expectText(t, next(t, h.src), "chunk:\n+ 1 a")

	// Records durable when a barrier arrives come before it (FLUSH reads
	// its writes), in log order, and its offset covers them.
	appendDML(t, store, "+ 2 'b'")
	appendDML(t, store, "+ 3 'c'")
	h.barrier(2)
	expectText(t, next(t, h.src), "chunk:\n+ 2 b\n+ 3 c")
	expectText(t, next(t, h.src), "barrier 2")
	commit(t, store, 2)
	if p := committedPos(t, store); p != (logPos{seq: 3}) {
		t.Fatalf("committed position %+v, want seq 3", p)
	}
	// With nothing left to read, the next barrier passes at once.
	h.barrier(3)
	expectText(t, next(t, h.src), "barrier 3")

	// A Next blocked on an empty log wakes up for new DML.
	got := make(chan stream.Message, 1)
	go func() { got <- next(t, h.src) }()
	time.Sleep(10 * time.Millisecond)
	appendDML(t, store, "- 1 'a'")
	expectText(t, <-got, "chunk:\n- 1 a")

	h.barrier(4)
	expectText(t, next(t, h.src), "barrier 4")
	commit(t, store, 4)
	if p := committedPos(t, store); p != (logPos{seq: 4}) {
		t.Fatalf("committed position %+v, want seq 4", p)
	}
	// A stop barrier also waits for the durable records: none is lost by
	// a graceful stop.
	appendDML(t, store, "+ 5 'e'")
	h.inbox <- stream.NewStopBarrier(5, srcActor).Barrier
	expectText(t, next(t, h.src), "chunk:\n+ 5 e")
	expectText(t, next(t, h.src), "barrier 5 stop(1 actors)")
}

// TestTableSourceReplaysUncommittedSuffix: a record cut by a barrier (the
// source paused, so the barrier passes at once), a committed epoch, an
// uncommitted one, a crash; the rebuilt source resumes inside the cut
// record and emits exactly what the uncommitted epoch had, then what came
// after it, no more and no less.
func TestTableSourceReplaysUncommittedSuffix(t *testing.T) {
	store := streamtest.OpenStore(t)
	h := newSrcHarness(t, store, 2)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	appendDML(t, store, "+ 1 'a'")
	appendDML(t, store, "+ 10 'x'\nU- 11 'x'\nU+ 11 'y'\n+ 13 'x'\n+ 14 'x'")
	expectText(t, next(t, h.src), "chunk:\n+ 1 a\n+ 10 x") // the pair is not cut
	h.thr.SetPaused(true)
	h.barrier(2)
	expectText(t, next(t, h.src), "barrier 2") // cuts record 2 after one row
	commit(t, store, 2)
	if p := committedPos(t, store); p != (logPos{seq: 1, rows: 1}) {
		t.Fatalf("committed position %+v, want seq 1 + 1 row", p)
	}
	h.thr.SetPaused(false)
	appendDML(t, store, "+ 20 'z'")
	h.barrier(3)
	expectText(t, next(t, h.src), "chunk:\nU- 11 x\nU+ 11 y")
	expectText(t, next(t, h.src), "chunk:\n+ 13 x\n+ 14 x")
	expectText(t, next(t, h.src), "chunk:\n+ 20 z")
	expectText(t, next(t, h.src), "barrier 3") // not committed
	appendDML(t, store, "+ 30 'w'")

	store.AbortUncommitted()
	h.rebuild(t)
	h.barrier(4)
	expectText(t, next(t, h.src), "barrier 4")
	expectText(t, next(t, h.src), "chunk:\nU- 11 x\nU+ 11 y")
	expectText(t, next(t, h.src), "chunk:\n+ 13 x\n+ 14 x")
	expectText(t, next(t, h.src), "chunk:\n+ 20 z\n+ 30 w")
	expectIdle(t, h.src)
	h.barrier(5)
	expectText(t, next(t, h.src), "barrier 5")
	commit(t, store, 5)
	if p := committedPos(t, store); p != (logPos{seq: 4}) {
		t.Fatalf("committed position %+v, want seq 4", p)
	}

	through, err := TruncateCommitted(context.Background(), store, srcTableID, OffsetTable(srcOffsetID))
	if err != nil || through != 4 {
		t.Fatalf("truncated through %d, %v; want 4", through, err)
	}
	if recs, _ := store.ReadDML(srcTableID, 1, 10); len(recs) != 0 {
		t.Fatalf("records left after truncation: %v", recs)
	}
}

func TestTableSourcePauseBlocksDataNotBarriers(t *testing.T) {
	store := streamtest.OpenStore(t)
	h := newSrcHarness(t, store, 8)
	h.thr.SetPaused(true)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	appendDML(t, store, "+ 1 'a'")
	expectIdle(t, h.src)

	// A barrier reaches a source blocked on the throttle.
	got := make(chan stream.Message, 1)
	go func() { got <- next(t, h.src) }()
	time.Sleep(10 * time.Millisecond)
	h.barrier(2)
	select {
	case m := <-got:
		expectText(t, m, "barrier 2")
	case <-time.After(2 * time.Second):
		t.Fatal("barrier held by pause")
	}
	expectIdle(t, h.src)
	h.thr.SetPaused(false)
	expectText(t, next(t, h.src), "chunk:\n+ 1 a")
	h.barrier(3)
	expectText(t, next(t, h.src), "barrier 3")
	commit(t, store, 3)
	if p := committedPos(t, store); p != (logPos{seq: 1}) {
		t.Fatalf("committed position %+v, want seq 1", p)
	}
}

func TestTableSourceRateLimit(t *testing.T) {
	store := streamtest.OpenStore(t)
	h := newSrcHarness(t, store, 1024)
	// 2000 rows/s; the token bucket holds four default chunks (4096 rows),
	// so the 904 rows beyond it take at least ~0.45 s.
	h.thr.SetRateLimit(2000)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	const want = 5000 // above the 4096-row bucket
	for range want / 100 {
		appendDML(t, store, strings.Repeat("+ 1 'a'\n", 100))
	}
	start := time.Now()
	rows := 0
	for rows < want {
		m := next(t, h.src)
		rows += m.Chunk.Cardinality()
	}
	if d := time.Since(start); d < 350*time.Millisecond {
		t.Fatalf("%d rows passed in %v despite a 2000 rows/s limit", rows, d)
	}
}

func TestTableSourceCancelWhileBlocked(t *testing.T) {
	store := streamtest.OpenStore(t)
	h := newSrcHarness(t, store, 8)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	for _, paused := range []bool{false, true} {
		h.thr.SetPaused(paused)
		if paused {
			appendDML(t, store, "+ 1 'a'")
		}
		expectCancelUnblocks(t, context.Background(), h.src, fmt.Sprintf("paused=%v", paused))
	}
}

func TestTableSourceBuildErrors(t *testing.T) {
	store := streamtest.OpenStore(t)
	env := &stream.Env{Store: store, Barriers: make(chan *stream.Barrier)}
	bad := OffsetTable(srcOffsetID)
	bad.Types = bad.Types[:2]
	for name, n := range map[string]*plan.Node{
		"no payload":   {Kind: plan.KindTableSource, Schema: srcSchema},
		"no schema":    {Kind: plan.KindTableSource, TableSource: &plan.TableSource{TableID: 1, OffsetTable: OffsetTable(2)}},
		"offset shape": {Kind: plan.KindTableSource, Schema: srcSchema, TableSource: &plan.TableSource{TableID: 1, OffsetTable: bad}},
		"wrong kind":   {Kind: plan.KindFilter},
	} {
		if _, err := Build(env, nil, n, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
