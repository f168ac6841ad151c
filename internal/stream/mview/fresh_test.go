package mview

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// freshRows encodes rows of kvTable with ids keys as stream.FreshRows, a
// byte between rows as in a DML payload.
func freshRows(t *testing.T, keys []int64, vals ...string) stream.Message {
	f := &stream.FreshRows{IDs: keys}
	for k, id := range keys {
		f.Rows.Buf = append(f.Rows.Buf, 0xee)
		start := len(f.Rows.Buf)
		var err error
		if f.Rows.Buf, err = codec.EncodeValue(f.Rows.Buf, types.Row{id, vals[k]}, kvTable().Types); err != nil {
			t.Fatal(err)
		}
		f.Rows.Spans = append(f.Rows.Spans, uint32(start), uint32(len(f.Rows.Buf)))
	}
	return stream.Message{Fresh: f}
}

// downstreamOf returns the Downstream of an actor dispatching as kind
// says: "simple" (no-shuffle), "hash", or anything else for none.
func downstreamOf(t *testing.T, kind string) *stream.Downstream {
	t.Helper()
	var ds []stream.Dispatcher
	out, _ := stream.NewChannel(testActor, testActor+1, 1)
	switch kind {
	case "simple":
		ds = append(ds, &stream.SimpleDispatcher{Out: out})
	case "hash":
		d, err := stream.NewHashDispatcher([]*stream.Output{out}, []int{0}, stream.EvenVNodeOwners(1))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	var down stream.Downstream
	stream.NewActor(testActor, 1, nil, ds, nil, nil).TrackDownstream(&down)
	return &down
}

// pullEpochs pulls e through n barriers, committing each epoch, and
// renders what came out, messages joined by "|".
func pullEpochs(ctx context.Context, t *testing.T, store *storage.Store, e stream.Executor, n uint64) string {
	t.Helper()
	var got []string
	for epoch := range n {
		for _, m := range streamtest.PullUntilBarrier(ctx, t, e) {
			got = append(got, streamtest.Render(m, testActor))
		}
		if err := store.Commit(ctx, epoch+1, nil); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Join(got, "|")
}

// committedRows renders kvTable's committed rows in key order.
func committedRows(ctx context.Context, t *testing.T, store *storage.Store) string {
	t.Helper()
	rows, err := ScanAll(ctx, store, kvTable())
	if err != nil {
		t.Fatal(err)
	}
	return formatRows(sortedByKey(rows), kvTable().Types)
}

// TestTableTakesFreshRows: a table's materialize stores fresh rows as they
// are encoded; it passes them on as they are when every dispatcher of its
// actor is no-shuffle, emits them decoded (in chunks of at most the chunk
// size) to other dispatchers, and emits nothing without a downstream; a
// table not keyed for fresh rows takes them as a chunk. The committed
// table is the same every way.
func TestTableTakesFreshRows(t *testing.T) {
	ctx := context.Background()
	ts := kvTable().Types
	for _, tc := range []struct {
		name       string
		fresh      bool   // plan.Materialize.FreshInserts
		downstream string // "", "simple" or "hash"
		want       string
	}{
		{"no downstream", true, "", "barrier 1|barrier 2|barrier 3 stop"},
		{"no-shuffle downstream", true, "simple", "barrier 1|fresh ids [1 2 3]|barrier 2|fresh ids [7]|barrier 3 stop"},
		{"hash downstream", true, "hash", "barrier 1|+ 1 a\n+ 2 b|+ 3 c|barrier 2|+ 7 g|barrier 3 stop"},
		{"not a fresh table", false, "", "barrier 1|+ 1 a\n+ 2 b|+ 3 c|barrier 2|+ 7 g|barrier 3 stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := streamtest.OpenStore(t)
			env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: 4, ChunkSize: 2, Downstream: downstreamOf(t, tc.downstream)}
			node := materializeNode(kvTable())
			node.Materialize.FreshInserts = tc.fresh
			src := stream.NewMockSource(ts, stream.NewBarrier(1),
				freshRows(t, []int64{1, 2, 3}, "a", "b", "c"), stream.NewBarrier(2),
				freshRows(t, []int64{7}, "g"), stream.NewStopBarrier(3, testActor))
			e, err := Build(env, nil, node, []stream.Executor{src})
			if err != nil {
				t.Fatal(err)
			}
			if g := pullEpochs(ctx, t, store, e, 3); g != tc.want {
				t.Fatalf("output %q, want %q", g, tc.want)
			}
			if g := committedRows(ctx, t, store); g != "1 a\n2 b\n3 c\n7 g\n" {
				t.Fatalf("table:\n%s", g)
			}
		})
	}
}

// TestViewTakesFreshRows: a trusted view keeps fresh rows handed through
// from its table as they are while its table holds no other uncommitted
// write, and applies them decoded, one by one, when it does; either way
// the rows are stored and emitted to a downstream that cannot carry them.
func TestViewTakesFreshRows(t *testing.T) {
	ctx := context.Background()
	ts := kvTable().Types
	for _, tc := range []struct {
		name  string
		first []stream.Message // before the fresh rows, in epoch 2
		want  string
	}{
		{"idle table", nil, "barrier 1|+ 1 a\n+ 2 b|+ 3 c|barrier 2 stop"},
		{"after a write", []stream.Message{stream.TextChunk(ts, "+ 50 x"), stream.TextChunk(ts, "U- 50 x\nU+ 50 y")},
			"barrier 1|+ 50 x|U- 50 x\nU+ 50 y|+ 1 a\n+ 2 b|+ 3 c|barrier 2 stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := streamtest.OpenStore(t)
			out, _ := stream.NewChannel(testActor, testActor+1, 1)
			d, err := stream.NewHashDispatcher([]*stream.Output{out}, []int{0}, stream.EvenVNodeOwners(1))
			if err != nil {
				t.Fatal(err)
			}
			var down stream.Downstream
			stream.NewActor(testActor, 1, nil, []stream.Dispatcher{d}, nil, nil).TrackDownstream(&down)
			env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: 4, ChunkSize: 2, Downstream: &down}
			node := materializeNode(kvTable())
			node.Materialize.View = true
			msgs := append([]stream.Message{stream.NewBarrier(1)}, tc.first...)
			msgs = append(msgs, freshRows(t, []int64{1, 2, 3}, "a", "b", "c"), stream.NewStopBarrier(2, testActor))
			e, err := Build(env, nil, node, []stream.Executor{stream.NewMockSource(ts, msgs...)})
			if err != nil {
				t.Fatal(err)
			}
			if g := pullEpochs(ctx, t, store, e, 2); g != tc.want {
				t.Fatalf("output %q, want %q", g, tc.want)
			}
			want := "1 a\n2 b\n3 c\n"
			if tc.first != nil {
				want += "50 y\n"
			}
			if g := committedRows(ctx, t, store); g != want {
				t.Fatalf("table:\n%s", g)
			}
		})
	}
}

// TestMaterializeTakesFreshRowsFromMerge: a materialize asks the Merge below
// it for fresh rows as they are (a table's actors receive their source's
// rows through one): with a no-shuffle downstream they leave as fresh
// rows, not as the chunk the Merge would otherwise decode.
func TestMaterializeTakesFreshRowsFromMerge(t *testing.T) {
	ctx := context.Background()
	store := streamtest.OpenStore(t)
	up, in := stream.NewChannel(testActor-1, testActor, 8)
	merge := stream.NewMerge(kvTable().Types, []*stream.Input{in})
	out, _ := stream.NewChannel(testActor, testActor+1, 1)
	var down stream.Downstream
	stream.NewActor(testActor, 1, nil, []stream.Dispatcher{&stream.SimpleDispatcher{Out: out}}, nil, nil).TrackDownstream(&down)
	env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: 4, Downstream: &down}
	node := materializeNode(kvTable())
	node.Materialize.FreshInserts = true
	e, err := Build(env, nil, node, []stream.Executor{merge})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []stream.Message{stream.NewBarrier(1), freshRows(t, []int64{1, 2}, "a", "b"), stream.NewBarrier(2)} {
		if err := up.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for range 2 {
		for _, m := range streamtest.PullUntilBarrier(ctx, t, e) {
			got = append(got, streamtest.Render(m, testActor))
		}
	}
	if g := strings.Join(got, "|"); g != "barrier 1|fresh ids [1 2]|barrier 2" {
		t.Fatalf("output %q", g)
	}
}
