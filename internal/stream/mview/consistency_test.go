package mview

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestViewConsistencyReports: a view's materialize reports every change
// that contradicts its stored rows, with the kind and key, and still
// applies it the tolerant way (its output equals a table's materialize's);
// a table's materialize, whose overwrites are by design, reports nothing.
func TestViewConsistencyReports(t *testing.T) {
	cases := []struct {
		name, script string
		want         []string // reports, "kind key"
	}{{
		name:   "consistent stream",
		script: "barrier\n+ 1 a\n+ 2 b\nbarrier\nU- 1 a\nU+ 1 b\nU- 2 b\nU+ 3 b\n- 3 b\n+ 2 z\nstop",
	}, {
		name:   "delete of an absent key",
		script: "barrier\n- 7 x\nbarrier\n+ 1 a\n- 1 a\n- 1 a\nstop",
		want:   []string{"delete of absent key 7", "delete of absent key 1"},
	}, {
		name:   "delete of a different row",
		script: "barrier\n+ 1 a\nbarrier\n- 1 zzz\nstop",
		want:   []string{"delete of different row 1"},
	}, {
		name:   "insert of a present key",
		script: "barrier\n+ 1 a\nbarrier\n+ 1 b\nstop",
		want:   []string{"insert of present key 1"},
	}, {
		name:   "update pair keeping the key, old row absent or different",
		script: "barrier\n+ 1 a\nbarrier\nU- 1 wrong\nU+ 1 b\nU- 5 ghost\nU+ 5 c\nstop",
		want:   []string{"delete of different row 1", "delete of absent key 5"},
	}, {
		name:   "update pair changing the key, onto a held key",
		script: "barrier\n+ 1 a\n+ 2 b\nbarrier\nU- 1 a\nU+ 2 a\nU- 9 q\nU+ 8 q\nstop",
		want:   []string{"insert of present key 2", "delete of absent key 9"},
	}, {
		name:   "lone halves of hidden pairs",
		script: "barrier\n+ 1 a\nchunk\nU- 1 a D\nU+ 1 x\nU- 4 b\nU+ 4 y D\nstop",
		want:   []string{"insert of present key 1", "delete of absent key 4"},
	}, {
		name:   "NULL equals NULL, a different value differs",
		script: "barrier\n+ 1 NULL\n+ 2 b\nbarrier\n- 1 NULL\nU- 2 b\nU+ 2 NULL\n- 2 b\nstop",
		want:   []string{"delete of different row 2"},
	}}
	for _, cache := range []int{1, 2, 0} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/cache=%d", tc.name, cache), func(t *testing.T) {
				viewOut, reports := runMaterialize(t, tc.script, cache, true)
				tableOut, none := runMaterialize(t, tc.script, cache, false)
				if g, w := strings.Join(reports, "|"), strings.Join(tc.want, "|"); g != w {
					t.Fatalf("reports %q, want %q", g, w)
				}
				if len(none) != 0 {
					t.Fatalf("a table's materialize reported %q", none)
				}
				if viewOut != tableOut {
					t.Fatalf("view output differs from the tolerant one:\n%s\nwant:\n%s", viewOut, tableOut)
				}
			})
		}
	}
}

// runMaterialize runs script through a materialize of kvTable (a view's if
// view) and returns its rendered output and the reports it made.
func runMaterialize(t *testing.T, script string, cache int, view bool) (string, []string) {
	ctx := context.Background()
	ts := kvTable().Types
	store := streamtest.OpenStore(t)
	var reports []string
	env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: cache, CheckInserts: true,
		OnInconsistentOp: func(table uint32, kind string, key types.Row) {
			if table != kvTable().ID {
				t.Errorf("report for table %d", table)
			}
			reports = append(reports, kind+" "+types.FormatRow(key, ts[:1]))
		}}
	n := materializeNode(kvTable())
	n.Materialize.View = view
	e, err := Build(env, nil, n, []stream.Executor{stream.NewMockSource(ts, streamtest.Script(ts, script, 1, testActor)...)})
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
			return strings.Join(got, "\n---\n"), reports
		}
	}
}
