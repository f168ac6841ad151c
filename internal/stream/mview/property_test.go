package mview

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// model is the view as a map from key to value text ("NULL" for NULL).
type model map[int64]string

// op is one input row change: an upsert, a delete (whose value may not be
// the stored one) or an update pair (whose old row may not be stored).
type op struct {
	kind   int // 0 upsert, 1 delete, 2 update
	k, k2  int64
	v, v2  types.Datum
	hidden bool
}

func genValue(t *rapid.T, label string) types.Datum {
	if rapid.IntRange(0, 5).Draw(t, label+"null") == 0 {
		return nil
	}
	return rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, label)
}

func genOp(t *rapid.T) op {
	return op{
		kind:   rapid.IntRange(0, 2).Draw(t, "kind"),
		k:      rapid.Int64Range(0, 5).Draw(t, "k"),
		k2:     rapid.Int64Range(0, 5).Draw(t, "k2"),
		v:      genValue(t, "v"),
		v2:     genValue(t, "v2"),
		hidden: rapid.IntRange(0, 9).Draw(t, "hidden") == 0,
	}
}

func text(d types.Datum) string { return types.FormatToken(d, types.TVarchar) }

// applyOp changes the model as the op must change the view ("overwrite").
func (m model) applyOp(o op) {
	if o.hidden {
		return
	}
	switch o.kind {
	case 0:
		m[o.k] = text(o.v)
	case 1:
		delete(m, o.k)
	case 2:
		delete(m, o.k)
		m[o.k2] = text(o.v2)
	}
}

// appendOp writes the op as text-form rows.
func appendOp(rows *[]string, o op) {
	suffix := ""
	if o.hidden {
		suffix = " D"
	}
	row := func(sign string, k int64, v types.Datum) string {
		return fmt.Sprintf("%s %d %s%s", sign, k, text(v), suffix)
	}
	switch o.kind {
	case 0:
		*rows = append(*rows, row("+", o.k, o.v))
	case 1:
		*rows = append(*rows, row("-", o.k, o.v))
	case 2:
		*rows = append(*rows, row("U-", o.k, o.v), row("U+", o.k2, o.v2))
	}
}

// applyOutput applies the executor's output to downstream's copy of the
// view, failing on any change that is not consistent with it: an insert of
// a present key, a delete or update of a row that is not exactly there.
func applyOutput(t *rapid.T, down model, c *types.Chunk) {
	for i := 0; i < c.Capacity(); i++ {
		if !c.Visible(i) {
			continue
		}
		k, v := c.Cols[0].Get(i).(int64), text(c.Cols[1].Get(i))
		old, present := down[k]
		switch c.Op(i) {
		case types.Insert, types.UpdateInsert:
			if present && c.Op(i) == types.Insert {
				t.Fatalf("insert of present key %d (%s over %s)", k, v, old)
			}
			down[k] = v
		case types.Delete, types.UpdateDelete:
			if !present || old != v {
				t.Fatalf("retraction of %d %s, downstream has %q (present=%v)", k, v, old, present)
			}
			delete(down, k)
		}
		if c.Op(i) == types.UpdateDelete && (i+1 >= c.Capacity() || c.Op(i+1) != types.UpdateInsert) {
			t.Fatalf("update pair split at row %d", i)
		}
	}
}

// consistent rewrites o into a change consistent with the view cur (what
// a view's input always is): an upsert of a held key becomes an update
// pair, a delete or update names the stored row, and neither inserts over
// a held key. It reports false for a delete of an absent key.
func consistent(o op, cur map[int64]types.Datum) (op, bool) {
	if o.hidden {
		return o, true
	}
	v, held := cur[o.k]
	switch {
	case o.kind == 0 && held:
		o = op{kind: 2, k: o.k, k2: o.k, v: v, v2: o.v}
	case o.kind == 1 && !held:
		return o, false
	case o.kind == 1:
		o.v = v
	case o.kind == 2 && !held:
		o = op{kind: 0, k: o.k2, v: o.v2}
		return consistent(o, cur)
	case o.kind == 2:
		o.v = v
		if _, taken := cur[o.k2]; taken && o.k2 != o.k {
			o.k2 = o.k
		}
	}
	switch o.kind {
	case 0:
		cur[o.k] = o.v
	case 1:
		delete(cur, o.k)
	case 2:
		delete(cur, o.k)
		cur[o.k2] = o.v2
	}
	return o, true
}

// TestMaterializeMatchesModel drives the executor with random upserts,
// deletes and updates (rows that may disagree with the stored ones) over a
// few epochs; or, as a view's or checked table's materialize that trusts
// its input (stream.Env.CheckInserts off), with changes consistent with
// what it holds. It runs them sometimes committing and sometimes crashing (discarding
// uncommitted epochs and rebuilding). After every barrier the downstream
// copy built from the output must equal the model, and after every commit
// the committed table (ScanAll) must too. Trusted inserts become fresh runs
// from one row or from trustedRunMin, and seals write them to files the
// commit ingests from any size or only past the store's default.
func TestMaterializeMatchesModel(t *testing.T) {
	runMin := trustedRunMin
	defer func() { trustedRunMin = runMin }()
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		trustedRunMin = rapid.SampledFrom([]int{1, runMin}).Draw(t, "trusted run min")
		store := streamtest.OpenStoreWith(t, storage.Options{IngestFrom: rapid.SampledFrom([]int{0, 1}).Draw(t, "ingest from")})
		tab := kvTable()
		env := &stream.Env{
			Store:        store,
			ActorID:      testActor,
			CacheEntries: rapid.SampledFrom([]int{1, 2, 1000}).Draw(t, "cache"),
			ChunkSize:    rapid.SampledFrom([]int{1, 2, 3, 1024}).Draw(t, "chunkSize"),
		}
		// A tolerant table upserts; a view, or a table whose writers
		// check their keys, gets consistent changes and trusts them.
		kind := rapid.SampledFrom([]string{"table", "view", "checked table"}).Draw(t, "kind")
		view := kind != "table"
		env.CheckInserts = !view // the tolerant table's upserts need the reads
		node := materializeNode(tab)
		node.Materialize.View = kind == "view"
		node.Materialize.CheckedWrites = kind == "checked table"
		cur, committedCur := map[int64]types.Datum{}, map[int64]types.Datum{}
		src := stream.NewMockSource(tab.Types)
		build := func() stream.Executor {
			src = stream.NewMockSource(tab.Types)
			e, err := Build(env, nil, node, []stream.Executor{src})
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			return stream.Checked("materialize", e)
		}
		e := build()
		want, down, committed := model{}, model{}, model{}
		epoch := uint64(1)
		src.Push(stream.NewBarrier(epoch))
		streamtest.PullUntilBarrier(ctx, t, e)

		for step := rapid.IntRange(1, 8).Draw(t, "epochs"); step > 0; step-- {
			for nChunks := rapid.IntRange(0, 3).Draw(t, "chunks"); nChunks > 0; nChunks-- {
				var rows []string
				for _, o := range rapid.SliceOfN(rapid.Custom(genOp), 0, 6).Draw(t, "ops") {
					if view {
						var ok bool
						if o, ok = consistent(o, cur); !ok {
							continue
						}
					}
					appendOp(&rows, o)
					want.applyOp(o)
				}
				if len(rows) > 0 {
					src.Push(stream.TextChunk(tab.Types, joinLines(rows)))
				}
			}
			epoch++
			src.Push(stream.NewBarrier(epoch))
			for _, msg := range streamtest.PullUntilBarrier(ctx, t, e) {
				if msg.Chunk != nil {
					if n := msg.Chunk.Capacity(); n > max(env.ChunkSize, 2) {
						t.Fatalf("output chunk of %d rows, chunk size %d", n, env.ChunkSize)
					}
					applyOutput(t, down, msg.Chunk)
				}
			}
			if !maps.Equal(down, want) {
				t.Fatalf("epoch %d: downstream %v, model %v", epoch, down, want)
			}
			switch rapid.IntRange(0, 3).Draw(t, "after") {
			case 0, 1:
				if err := store.Commit(ctx, epoch, nil); err != nil {
					t.Fatalf("commit: %v", err)
				}
				committed, committedCur = maps.Clone(want), maps.Clone(cur)
				checkTable(t, ctx, store, tab, committed)
			case 2:
				// Crash: uncommitted epochs are lost everywhere, including
				// downstream, which recovers to the same committed epoch.
				store.AbortUncommitted()
				want, down, cur = maps.Clone(committed), maps.Clone(committed), maps.Clone(committedCur)
				e = build()
				epoch++
				src.Push(stream.NewBarrier(epoch))
				streamtest.PullUntilBarrier(ctx, t, e)
			}
		}
		epoch++
		src.Push(stream.NewStopBarrier(epoch, testActor))
		streamtest.PullUntilBarrier(ctx, t, e)
		if err := store.Commit(ctx, epoch, nil); err != nil {
			t.Fatalf("commit: %v", err)
		}
		checkTable(t, ctx, store, tab, want)
	})
}

func checkTable(t *rapid.T, ctx context.Context, store *storage.Store, tab plan.Table, want model) {
	t.Helper()
	rows, err := ScanAll(ctx, store, tab)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	got := model{}
	for _, r := range rows {
		got[r[0].(int64)] = text(r[1])
	}
	if !maps.Equal(got, want) {
		t.Fatalf("committed table %v, model %v", got, want)
	}
}

func joinLines(rows []string) string { return strings.Join(rows, "\n") }
