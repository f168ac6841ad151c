package mview

import (
	"context"
	"strings"
	"testing"

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

// TestTableTakesFreshRows: a table's materialize stores fresh rows as they
// are encoded and emits them, decoded, only when its actor has a
// downstream, in chunks of at most the chunk size; a table not keyed for
// fresh rows takes them as a chunk. The
// committed table is the same every way.
func TestTableTakesFreshRows(t *testing.T) {
	ctx := context.Background()
	ts := kvTable().Types
	for _, tc := range []struct {
		name       string
		fresh      bool // plan.Materialize.FreshInserts
		downstream bool
		want       string
	}{
		{"no downstream", true, false, "barrier 1|barrier 2|barrier 3 stop"},
		{"downstream", true, true, "barrier 1|+ 1 a\n+ 2 b|+ 3 c|barrier 2|+ 7 g|barrier 3 stop"},
		{"not a fresh table", false, false, "barrier 1|+ 1 a\n+ 2 b|+ 3 c|barrier 2|+ 7 g|barrier 3 stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := streamtest.OpenStore(t)
			var ds []stream.Dispatcher
			if tc.downstream {
				out, _ := stream.NewChannel(testActor, testActor+1, 1)
				ds = append(ds, &stream.SimpleDispatcher{Out: out})
			}
			var down stream.Downstream
			stream.NewActor(testActor, 1, nil, ds, nil, nil).TrackDownstream(&down)
			env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: 4, ChunkSize: 2, Downstream: &down}
			node := materializeNode(kvTable())
			node.Materialize.FreshInserts = tc.fresh
			src := stream.NewMockSource(ts, stream.NewBarrier(1),
				freshRows(t, []int64{1, 2, 3}, "a", "b", "c"), stream.NewBarrier(2),
				freshRows(t, []int64{7}, "g"), stream.NewStopBarrier(3, testActor))
			e, err := Build(env, nil, node, []stream.Executor{src})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for epoch := range uint64(3) {
				for _, m := range streamtest.PullUntilBarrier(ctx, t, e) {
					got = append(got, streamtest.Render(m, testActor))
				}
				if err := store.Commit(ctx, epoch+1, nil); err != nil {
					t.Fatal(err)
				}
			}
			if g := strings.Join(got, "|"); g != tc.want {
				t.Fatalf("output %q, want %q", g, tc.want)
			}
			rows, err := ScanAll(ctx, store, kvTable())
			if err != nil {
				t.Fatal(err)
			}
			if g := formatRows(sortedByKey(rows), ts); g != "1 a\n2 b\n3 c\n7 g\n" {
				t.Fatalf("table:\n%s", g)
			}
		})
	}
}
