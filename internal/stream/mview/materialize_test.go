package mview

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestMaterialize runs each case at several cache sizes (1 entry makes
// every lookup but the last go to the table) and checks the output
// messages and then the committed table.
func TestMaterialize(t *testing.T) {
	ts := kvTable().Types
	cases := []struct {
		name      string
		chunkSize int
		script    string
		want      []string
		table     string // committed rows after the stop barrier
	}{{
		name:   "insert then overwrite",
		script: "barrier\n+ 1 a\n+ 2 b\nbarrier\n+ 1 c\nstop",
		want:   []string{"barrier 1", "+ 1 a\n+ 2 b", "barrier 2", "U- 1 a\nU+ 1 c", "barrier 3 stop"},
		table:  "1 c\n2 b\n",
	}, {
		name:   "delete of a missing key is ignored",
		script: "barrier\n- 7 x\nchunk\n+ 1 a\n- 8 y\n- 1 a\n- 1 a\nstop",
		want:   []string{"barrier 1", "+ 1 a\n- 1 a", "barrier 2 stop"},
		table:  "",
	}, {
		name:   "delete of a different row retracts the stored one",
		script: "barrier\n+ 1 a\n+ 2 b\nbarrier\n- 1 zzz\nstop",
		want:   []string{"barrier 1", "+ 1 a\n+ 2 b", "barrier 2", "- 1 a", "barrier 3 stop"},
		table:  "2 b\n",
	}, {
		name:   "update keeping the key corrects the old row",
		script: "barrier\n+ 1 a\nbarrier\nU- 1 wrong\nU+ 1 b\nU- 5 ghost\nU+ 5 c\nstop",
		want:   []string{"barrier 1", "+ 1 a", "barrier 2", "U- 1 a\nU+ 1 b\n+ 5 c", "barrier 3 stop"},
		table:  "1 b\n5 c\n",
	}, {
		name:   "update changing the key is delete plus insert",
		script: "barrier\n+ 1 a\n+ 2 b\nbarrier\nU- 1 a\nU+ 3 a\nU- 3 a\nU+ 2 z\nU- 9 q\nU+ 8 q\nstop",
		want: []string{"barrier 1", "+ 1 a\n+ 2 b", "barrier 2",
			"- 1 a\n+ 3 a\n- 3 a\nU- 2 b\nU+ 2 z\n+ 8 q", "barrier 3 stop"},
		table: "2 z\n8 q\n",
	}, {
		name:   "several writes to one key in a chunk",
		script: "barrier\n+ 3 a\n+ 3 b\n- 3 z\n+ 3 c\n+ 4 NULL D\nstop",
		want:   []string{"barrier 1", "+ 3 a\nU- 3 a\nU+ 3 b\n- 3 b\n+ 3 c", "barrier 2 stop"},
		table:  "3 c\n",
	}, {
		name:   "hidden halves of an update pair",
		script: "barrier\n+ 1 a\n+ 2 b\nchunk\nU- 1 a D\nU+ 1 x\nU- 2 b\nU+ 2 y D\nstop",
		want:   []string{"barrier 1", "+ 1 a\n+ 2 b", "U- 1 a\nU+ 1 x\n- 2 b", "barrier 2 stop"},
		table:  "1 x\n",
	}, {
		name:      "update pairs never split across chunks",
		chunkSize: 2,
		script:    "barrier\n+ 1 a\n+ 1 b\n+ 2 c\n+ 3 d\n+ 4 e\nstop",
		want:      []string{"barrier 1", "+ 1 a", "U- 1 a\nU+ 1 b", "+ 2 c\n+ 3 d", "+ 4 e", "barrier 2 stop"},
		table:     "1 b\n2 c\n3 d\n4 e\n",
	}, {
		name:      "chunks of one row carry updates as delete and insert",
		chunkSize: 1,
		script:    "barrier\n+ 1 a\n+ 1 b\nstop",
		want:      []string{"barrier 1", "+ 1 a", "- 1 a", "+ 1 b", "barrier 2 stop"},
		table:     "1 b\n",
	}}
	for _, cache := range []int{1, 2, 0} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/cache=%d", tc.name, cache), func(t *testing.T) {
				ctx := context.Background()
				store := streamtest.OpenStore(t)
				env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: cache, ChunkSize: tc.chunkSize, CheckInserts: true}
				src := stream.NewMockSource(ts, streamtest.Script(ts, tc.script, 1, testActor)...)
				e, err := Build(env, nil, materializeNode(kvTable()), []stream.Executor{src})
				if err != nil {
					t.Fatal(err)
				}
				ce := stream.Checked("materialize", e)
				var got []string
				for {
					msgs := streamtest.PullUntilBarrier(ctx, t, ce)
					for _, m := range msgs {
						got = append(got, streamtest.Render(m, testActor))
					}
					b := msgs[len(msgs)-1].Barrier
					if err := store.Commit(ctx, b.Epoch, nil); err != nil {
						t.Fatal(err)
					}
					if b.IsStop(testActor) {
						break
					}
				}
				if g, w := strings.Join(got, "\n---\n"), strings.Join(tc.want, "\n---\n"); g != w {
					t.Fatalf("output:\n%s\n\nwant:\n%s", g, w)
				}
				rows, err := ScanAll(ctx, store, kvTable())
				if err != nil {
					t.Fatal(err)
				}
				if g := formatRows(sortedByKey(rows), ts); g != tc.table {
					t.Fatalf("table:\n%s\nwant:\n%s", g, tc.table)
				}
			})
		}
	}
}

// Batch reads see only committed epochs: writes sealed but not committed
// are invisible to ScanAll, and an uncommitted epoch's writes are gone
// after recovery while the committed ones remain.
func TestMaterializeCommitAndRecovery(t *testing.T) {
	ctx := context.Background()
	ts := kvTable().Types
	store := streamtest.OpenStore(t)
	env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: 4, CheckInserts: true}
	build := func(msgs ...stream.Message) stream.Executor {
		e, err := Build(env, nil, materializeNode(kvTable()), []stream.Executor{stream.NewMockSource(ts, msgs...)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	scan := func() string {
		rows, err := ScanAll(ctx, store, kvTable())
		if err != nil {
			t.Fatal(err)
		}
		return formatRows(sortedByKey(rows), ts)
	}
	e := build(stream.NewBarrier(1), stream.TextChunk(ts, "+ 1 a\n+ 2 b"), stream.NewBarrier(2),
		stream.TextChunk(ts, "+ 1 lost\n- 2 b"), stream.NewBarrier(3))
	streamtest.PullUntilBarrier(ctx, t, e)
	streamtest.PullUntilBarrier(ctx, t, e)
	if got := scan(); got != "" {
		t.Fatalf("uncommitted rows visible: %q", got)
	}
	if err := store.Commit(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if got := scan(); got != "1 a\n2 b\n" {
		t.Fatalf("after commit: %q", got)
	}
	streamtest.PullUntilBarrier(ctx, t, e) // epoch 3 sealed, never committed

	store.AbortUncommitted()
	// Rebuilt from scratch on the committed state: the cache is empty and
	// the lost overwrite is gone, so the update below must retract "1 a".
	e = build(stream.NewBarrier(4), stream.TextChunk(ts, "+ 1 c\n- 2 x"), stream.NewStopBarrier(5, testActor))
	var got []string
	for _, m := range append(streamtest.PullUntilBarrier(ctx, t, e), streamtest.PullUntilBarrier(ctx, t, e)...) {
		got = append(got, streamtest.Render(m, testActor))
	}
	want := "barrier 4|U- 1 a\nU+ 1 c\n- 2 b|barrier 5 stop"
	if g := strings.Join(got, "|"); g != want {
		t.Fatalf("after recovery: %q, want %q", g, want)
	}
	if err := store.Commit(ctx, 5, nil); err != nil {
		t.Fatal(err)
	}
	if got := scan(); got != "1 c\n" {
		t.Fatalf("final table %q", got)
	}
}

func TestBuildErrors(t *testing.T) {
	store := streamtest.OpenStore(t)
	ts := kvTable().Types
	src := func() []stream.Executor { return []stream.Executor{stream.NewMockSource(ts)} }
	env := &stream.Env{Store: store, ActorID: testActor}
	badPK := kvTable()
	badPK.PK = []int{4}
	badDist := kvTable()
	badDist.DistKey = []int{1}
	cases := []struct {
		name   string
		env    *stream.Env
		n      *plan.Node
		inputs []stream.Executor
	}{
		{"nil node", env, nil, src()},
		{"wrong kind", env, &plan.Node{Kind: plan.KindFilter}, src()},
		{"no body", env, &plan.Node{Kind: plan.KindMaterialize}, src()},
		{"no store", &stream.Env{}, materializeNode(kvTable()), src()},
		{"no input", env, materializeNode(kvTable()), nil},
		{"types differ", env, materializeNode(kvTable()), []stream.Executor{stream.NewMockSource([]types.Type{i64, i64})}},
		{"pk out of range", env, materializeNode(badPK), src()},
		{"dist key not in pk", env, materializeNode(badDist), src()},
		{"no vnodes", &stream.Env{Store: store, VNodes: []uint16{}}, materializeNode(kvTable()), src()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Build(tc.env, nil, tc.n, tc.inputs); err == nil {
				t.Fatalf("Build succeeded")
			}
		})
	}
}

// sortedByKey orders rows by their first column: ScanAll returns them
// vnode by vnode, not in key order.
func sortedByKey(rows []types.Row) []types.Row {
	out := append([]types.Row(nil), rows...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && types.Compare(out[j][0], out[j-1][0]) < 0; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestViewFreshRunKeepsChunkSize: a view that trusts its input stores a
// run of inserts into an idle table as fresh rows and emits them in
// chunks of at most the chunk size, skipping hidden rows.
func TestViewFreshRunKeepsChunkSize(t *testing.T) {
	ctx := context.Background()
	ts := kvTable().Types
	store := streamtest.OpenStore(t)
	env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: 4, ChunkSize: 2}
	in := stream.TextChunk(ts, "+ 1 a\n+ 2 b\n+ 3 c\n+ 4 d\n+ 5 e\n+ 6 f\n+ 7 g")
	var vis types.Bitmap
	for i := range 7 {
		if i != 3 {
			vis.Set(i) // row 4 hidden
		}
	}
	in.Chunk.SetVisibility(vis)
	src := stream.NewMockSource(ts, stream.NewBarrier(1), in, stream.NewStopBarrier(2, testActor))
	node := materializeNode(kvTable())
	node.Materialize.View = true
	e, err := Build(env, nil, node, []stream.Executor{src})
	if err != nil {
		t.Fatal(err)
	}
	ce := stream.Checked("materialize", e)
	var got []string
	for _, epoch := range []uint64{1, 2} {
		for _, m := range streamtest.PullUntilBarrier(ctx, t, ce) {
			got = append(got, streamtest.Render(m, testActor))
		}
		if err := store.Commit(ctx, epoch, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"barrier 1", "+ 1 a\n+ 2 b", "+ 3 c\n+ 5 e", "+ 6 f\n+ 7 g", "barrier 2 stop"}
	if g, w := strings.Join(got, "\n---\n"), strings.Join(want, "\n---\n"); g != w {
		t.Fatalf("output:\n%s\n\nwant:\n%s", g, w)
	}
	rows, err := ScanAll(ctx, store, kvTable())
	if err != nil {
		t.Fatal(err)
	}
	if g := formatRows(sortedByKey(rows), ts); g != "1 a\n2 b\n3 c\n5 e\n6 f\n7 g\n" {
		t.Fatalf("table:\n%s", g)
	}
}
