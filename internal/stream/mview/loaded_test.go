package mview

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
)

// loadedFile builds a bulk load's file of kvTable with ids 1..4 (values
// a..d), as a COPY does.
func loadedFile(t *testing.T, store *storage.Store) *storage.LoadedFile {
	t.Helper()
	load, err := store.NewBulkLoad(storage.TableDesc(kvTable()))
	if err != nil {
		t.Fatal(err)
	}
	f := freshRows(t, []int64{1, 2, 3, 4}, "a", "b", "c", "d").Fresh
	if err := load.Add(f.IDs, f.Rows); err != nil {
		t.Fatal(err)
	}
	path, err := store.NewLoadPath(kvTable().ID)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := load.Finish(path)
	if err != nil {
		t.Fatal(err)
	}
	return lf
}

// TestTableTakesALoadedFile: a table's materialize adds a bulk load's
// file, reads its rows by key in the same epoch (a delete of one of
// them), and emits the rows, decoded, only when something reads its
// output; once the epoch's commit ingests the file, the table holds the
// load less the delete, either way.
func TestTableTakesALoadedFile(t *testing.T) {
	ctx := context.Background()
	ts := kvTable().Types
	for _, downstream := range []string{"none", "simple", "hash"} {
		t.Run(downstream, func(t *testing.T) {
			store := streamtest.OpenStore(t)
			env := &stream.Env{Store: store, ActorID: testActor, CacheEntries: 4, ChunkSize: 2, Downstream: downstreamOf(t, downstream)}
			node := materializeNode(kvTable())
			node.Materialize.FreshInserts = true
			f := loadedFile(t, store)
			src := stream.NewMockSource(ts, stream.NewBarrier(1),
				stream.Message{Fresh: &stream.FreshRows{IDCol: 0, Loaded: f}},
				stream.TextChunk(ts, "- 2 b"), stream.NewStopBarrier(2, testActor))
			e, err := Build(env, nil, node, []stream.Executor{src})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range streamtest.PullUntilBarrier(ctx, t, e) {
				got = append(got, streamtest.Render(m, testActor))
			}
			if err := store.Commit(ctx, 1, nil); err != nil {
				t.Fatal(err)
			}
			for _, m := range streamtest.PullUntilBarrier(ctx, t, e) {
				got = append(got, streamtest.Render(m, testActor))
			}
			if err := store.StageLoadedFile(2, 99, kvTable().ID, store.TableGens(kvTable().ID), f); err != nil {
				t.Fatal(err)
			}
			if err := store.Commit(ctx, 2, nil); err != nil {
				t.Fatal(err)
			}
			checkLoadedOutput(t, downstream != "none", got)
			if g := committedRows(ctx, t, store); g != "1 a\n3 c\n4 d\n" {
				t.Fatalf("table:\n%s", g)
			}
		})
	}
}

// checkLoadedOutput checks a loaded file's rows came out, each once and
// before the delete, when they should, and nothing else did (a delete is
// emitted either way).
func checkLoadedOutput(t *testing.T, emits bool, got []string) {
	t.Helper()
	want := []string{"barrier 1", "- 2 b", "barrier 2 stop"}
	if emits {
		if len(got) <= len(want) {
			t.Fatalf("output %q: the loaded rows did not come out", got)
		}
		// Rows decoded ("+ 1 a"), or passed on as fresh rows ("fresh
		// ids [1 3]"), whose values the downstream decodes: their ids.
		var ids []string
		for _, m := range got[1 : len(got)-2] {
			if fresh, ok := strings.CutPrefix(m, "fresh ids ["); ok {
				ids = append(ids, strings.Fields(strings.TrimSuffix(fresh, "]"))...)
				continue
			}
			for _, row := range strings.Split(m, "\n") {
				if f := strings.Fields(row); len(f) == 3 && f[0] == "+" && f[2] == string(rune('a'-1+int(f[1][0]-'0'))) {
					ids = append(ids, f[1])
				} else {
					t.Fatalf("output row %q is not a loaded row", row)
				}
			}
		}
		slices.Sort(ids)
		if strings.Join(ids, " ") != "1 2 3 4" {
			t.Fatalf("output %q: want the loaded rows once each, then the delete", got)
		}
		got = append([]string{got[0]}, got[len(got)-2:]...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("output %q, want %q", got, want)
	}
}
