package source

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/nexmark"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

const connOffsetID = 21

func bidSpec(splits, events string) connector.Spec {
	return connector.Spec{Connector: "nexmark", RowID: true,
		Columns: []connector.Column{{Name: "auction", Type: types.TInt64}, {Name: "price", Type: types.TInt64}},
		Options: map[string]string{"nexmark.table.type": "Bid", "nexmark.split.num": splits,
			"nexmark.event.num": events, "nexmark.min.event.gap.in.ns": "0"}}
}

func newConnectorSource(t *testing.T, store *storage.Store, spec connector.Spec, index, par int,
	inbox chan *stream.Barrier, thr *stream.Throttle) *ConnectorSource {
	t.Helper()
	src, err := connector.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	env := &stream.Env{Store: store, ActorID: stream.ActorID(100 + index), Index: index, Parallelism: par,
		Throttle: thr, ChunkSize: 64, Barriers: inbox}
	n := &plan.Node{Kind: plan.KindConnectorSource, Schema: spec.Schema(),
		Connector: &plan.ConnectorSource{Spec: spec, Splits: src.Splits(), OffsetTable: ConnectorOffsetTable(connOffsetID)}}
	ex, err := Build(env, nil, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ex.(*ConnectorSource)
}

// pullEpoch sends barrier epoch after letting the source run for a while,
// and returns the row ids it emitted before the barrier.
func pullEpoch(t *testing.T, ctx context.Context, s *ConnectorSource, inbox chan *stream.Barrier, epoch uint64, rows int) []int64 {
	t.Helper()
	var ids []int64
	for len(ids) < rows {
		msg, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Chunk == nil {
			t.Fatalf("unexpected %v", msg)
		}
		col := msg.Chunk.Cols[len(msg.Chunk.Cols)-1].(*types.Vec[int64])
		ids = append(ids, col.Vals...)
	}
	inbox <- &stream.Barrier{Epoch: epoch, Checkpoint: true}
	for {
		msg, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Barrier != nil {
			if msg.Barrier.Epoch != epoch {
				t.Fatalf("barrier %d, want %d", msg.Barrier.Epoch, epoch)
			}
			return ids
		}
		col := msg.Chunk.Cols[len(msg.Chunk.Cols)-1].(*types.Vec[int64])
		ids = append(ids, col.Vals...)
	}
}

func TestConnectorSourceResumesAfterTheCommittedEpoch(t *testing.T) {
	ctx := context.Background()
	store := streamtest.OpenStore(t)
	spec := bidSpec("3", "4000")
	inbox := make(chan *stream.Barrier, 4)
	s := newConnectorSource(t, store, spec, 0, 1, inbox, stream.NewThrottle())
	inbox <- &stream.Barrier{Epoch: 1, Checkpoint: true}
	if msg, err := s.Next(ctx); err != nil || msg.Barrier == nil {
		t.Fatalf("first message %v, %v", msg, err)
	}
	committed := pullEpoch(t, ctx, s, inbox, 2, 500)
	commit(t, store, 2)
	lost := pullEpoch(t, ctx, s, inbox, 3, 500) // sealed, never committed
	if len(lost) == 0 {
		t.Fatal("no rows in the lost epoch")
	}
	// A crash: the actor is rebuilt on the committed state.
	inbox = make(chan *stream.Barrier, 4)
	s = newConnectorSource(t, store, spec, 0, 1, inbox, stream.NewThrottle())
	inbox <- &stream.Barrier{Epoch: 4, Checkpoint: true}
	if msg, err := s.Next(ctx); err != nil || msg.Barrier == nil {
		t.Fatalf("first message after the crash %v, %v", msg, err)
	}
	want := bidPositions(t, 4000)
	rest := pullEpoch(t, ctx, s, inbox, 5, len(want)-len(committed))
	got := append(committed, rest...)
	seen := map[int64]bool{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("row %d emitted twice across the crash", id)
		}
		seen[id] = true
	}
	if len(seen) != len(want) {
		t.Fatalf("%d rows, want %d", len(seen), len(want))
	}
	for _, id := range want {
		if !seen[id] {
			t.Fatalf("bid %d missing", id)
		}
	}
	// Exhausted: a barrier still passes at once.
	inbox <- &stream.Barrier{Epoch: 6, Checkpoint: true}
	if msg, err := s.Next(ctx); err != nil || msg.Barrier == nil || msg.Barrier.Epoch != 6 {
		t.Fatalf("after the end: %v, %v", msg, err)
	}
}

// bidPositions are the positions below events that hold bids.
func bidPositions(t *testing.T, events int64) []int64 {
	g, err := nexmark.NewGenerator(nexmark.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for n := range events {
		if g.KindOf(g.Number(n)) == nexmark.KindBid {
			out = append(out, n)
		}
	}
	return out
}

func TestConnectorSourceActorsShareTheSplits(t *testing.T) {
	ctx := context.Background()
	store := streamtest.OpenStore(t)
	spec := bidSpec("5", "2000")
	want := bidPositions(t, 2000)
	seen := map[int64]int{}
	total := 0
	for idx := range 2 {
		inbox := make(chan *stream.Barrier, 4)
		s := newConnectorSource(t, store, spec, idx, 2, inbox, stream.NewThrottle())
		if got := len(s.owned); got != []int{3, 2}[idx] {
			t.Fatalf("actor %d owns %d splits", idx, got)
		}
		inbox <- &stream.Barrier{Epoch: 1, Checkpoint: true}
		if _, err := s.Next(ctx); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, sp := range s.owned {
			for _, id := range want {
				if id%5 == int64(sp) {
					n++
				}
			}
		}
		for _, id := range pullEpoch(t, ctx, s, inbox, 2, n) {
			seen[id] = idx
			total++
		}
	}
	if total != len(want) || len(seen) != len(want) {
		t.Fatalf("%d rows (%d distinct), want %d", total, len(seen), len(want))
	}
}

func TestPausedConnectorSourcePassesBarriers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store := streamtest.OpenStore(t)
	thr := stream.NewThrottle()
	inbox := make(chan *stream.Barrier, 4)
	s := newConnectorSource(t, store, bidSpec("1", "100000"), 0, 1, inbox, thr)
	inbox <- &stream.Barrier{Epoch: 1, Checkpoint: true}
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	thr.SetPaused(true)
	got := make(chan stream.Message, 1)
	go func() {
		msg, err := s.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- msg
	}()
	select {
	case msg := <-got:
		t.Fatalf("a paused source returned %v", msg)
	case <-time.After(50 * time.Millisecond):
	}
	inbox <- &stream.Barrier{Epoch: 2, Checkpoint: true}
	if msg := <-got; msg.Barrier == nil || msg.Barrier.Epoch != 2 {
		t.Fatalf("paused source returned %v, want barrier 2", msg)
	}
	thr.SetPaused(false)
	if msg, err := s.Next(ctx); err != nil || msg.Chunk == nil {
		t.Fatalf("resumed source returned %v, %v", msg, err)
	}
	// Cancelled (an immediate drop) while blocked: Next returns at once.
	thr.SetPaused(true)
	dctx, dcancel := context.WithCancel(ctx)
	go func() { time.Sleep(20 * time.Millisecond); dcancel() }()
	if _, err := s.Next(dctx); err == nil {
		t.Fatal("a cancelled source returned no error")
	}
}

// A Person source skips the positions of other events; once a split is
// exhausted its offset is its end, even after positions with no row.
func TestConnectorSourceOffsetsReachTheEnd(t *testing.T) {
	ctx := context.Background()
	store := streamtest.OpenStore(t)
	spec := connector.Spec{Connector: "nexmark", RowID: true, Columns: []connector.Column{{Name: "id", Type: types.TInt64}},
		Options: map[string]string{"nexmark.table.type": "Person", "nexmark.split.num": "2", "nexmark.event.num": "977",
			"nexmark.min.event.gap.in.ns": "0"}}
	inbox := make(chan *stream.Barrier, 4)
	s := newConnectorSource(t, store, spec, 0, 1, inbox, stream.NewThrottle())
	inbox <- &stream.Barrier{Epoch: 1, Checkpoint: true}
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for { // until every split is exhausted: Next blocks
		tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		msg, err := s.Next(tctx)
		cancel()
		if err != nil {
			break
		}
		rows += msg.Chunk.Cardinality()
	}
	if rows != 20 { // 977 events hold 20 people
		t.Fatalf("%d people", rows)
	}
	pullEpoch(t, ctx, s, inbox, 2, 0)
	commit(t, store, 2)
	src, _ := connector.Open(spec)
	for split := range 2 {
		end, _ := src.End(split)
		off, err := readOffset(ctx, s.offsets, split)
		if err != nil || off != end {
			t.Errorf("split %d: committed offset %d (%v), end %d", split, off, err, end)
		}
	}
}
