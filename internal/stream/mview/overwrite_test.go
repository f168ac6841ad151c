package mview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestTableOverwritesMatchOverlay: a checked table's materialize that
// trusts its writers takes runs of update pairs as fresh overwrites; fed
// the same consistent statements (runs of inserts, of updates, deletes,
// single updates; a key updated again in the same epoch; epochs sealed
// and committed) as one that keeps every pair in its overlay, it emits the
// same changes, reads the same rows and commits the same table. The table
// is keyed by a bigint or by text, and its spills are drawn.
func TestTableOverwritesMatchOverlay(t *testing.T) {
	defer func(n int) { trustedRunMin = n }(trustedRunMin)
	trustedRunMin = 4
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		tbl := kvTable()
		if rapid.Bool().Draw(rt, "text key") {
			tbl.Types = []types.Type{str, str}
		}
		key := func(k int64) types.Datum {
			if tbl.Types[0] == str {
				return fmt.Sprintf("k%03d", k)
			}
			return k
		}
		// The first spills fresh rows past a drawn size (or never) and
		// seals them into files (or batches).
		opts := storage.Options{SpillFrom: rapid.SampledFrom([]int{1, 200, 0}).Draw(rt, "spillFrom"),
			IngestFrom: rapid.SampledFrom([]int{1, -1}).Draw(rt, "ingestFrom")}
		runs := []*overwriteRun{startOverwriteRun(rt, tbl, true, opts), startOverwriteRun(rt, tbl, false, storage.Options{})}
		held := map[int64]string{}
		next := int64(0)
		for epoch := uint64(1); epoch <= uint64(rapid.IntRange(1, 6).Draw(rt, "epochs")); epoch++ {
			var chunks []*types.Chunk
			for range rapid.IntRange(0, 5).Draw(rt, "statements") {
				b := types.NewBuilder(tbl.Types, 1024)
				keys := heldKeys(held)
				switch rapid.IntRange(0, 3).Draw(rt, "kind") {
				case 0:
					for range rapid.IntRange(1, 40).Draw(rt, "inserts") {
						held[next] = fmt.Sprint("i", next)
						b.Append(types.Insert, types.Row{key(next), held[next]})
						next++
					}
				case 1, 2:
					n := rapid.IntRange(0, len(keys)).Draw(rt, "updates")
					for _, k := range rapid.Permutation(keys).Draw(rt, "order")[:n] {
						v := fmt.Sprint("u", epoch, "-", k)
						b.Append(types.UpdateDelete, types.Row{key(k), held[k]})
						b.Append(types.UpdateInsert, types.Row{key(k), v})
						held[k] = v
					}
				default:
					for _, k := range keys[:rapid.IntRange(0, min(3, len(keys))).Draw(rt, "deletes")] {
						b.Append(types.Delete, types.Row{key(k), held[k]})
						delete(held, k)
					}
				}
				if c := b.Take(); c != nil {
					chunks = append(chunks, c)
				}
			}
			for _, r := range runs {
				r.epoch(ctx, rt, chunks, epoch, rapid.Bool().Draw(rt, "commit"))
			}
			if a, b := runs[0].out.String(), runs[1].out.String(); a != b {
				rt.Fatalf("epoch %d: output\n%s\nwith overlay only:\n%s", epoch, a, b)
			}
			for k := range next {
				a, aok, aerr := runs[0].table.Get(ctx, types.Row{key(k)})
				b, bok, berr := runs[1].table.Get(ctx, types.Row{key(k)})
				if aerr != nil || berr != nil || aok != bok || fmt.Sprint(a) != fmt.Sprint(b) {
					rt.Fatalf("get %d: %v %v %v, overlay only %v %v %v", k, a, aok, aerr, b, bok, berr)
				}
			}
		}
		for _, r := range runs {
			r.epoch(ctx, rt, nil, 100, true)
		}
		a, b := scanRows(ctx, rt, runs[0].store, tbl), scanRows(ctx, rt, runs[1].store, tbl)
		if a != b {
			rt.Fatalf("committed:\n%s\noverlay only:\n%s", a, b)
		}
	})
}

// overwriteRun is one materialize of TestTableOverwritesMatchOverlay.
type overwriteRun struct {
	store *storage.Store
	m     *Materialize
	table *storage.StateTable
	out   strings.Builder
	// sealed is the last epoch sealed, committed the last committed.
	sealed, committed uint64
}

func startOverwriteRun(t *rapid.T, tbl plan.Table, overwrites bool, opts storage.Options) *overwriteRun {
	store := streamtest.OpenStoreWith(t, opts)
	table, err := store.OpenTable(storage.TableDesc(tbl), storage.ActorID(testActor), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := newMaterialize(stream.NewMockSource(tbl.Types), table, tbl, 256, 4)
	m.trusted, m.overwrites = true, overwrites
	table.ReadByKey()
	return &overwriteRun{store: store, m: m, table: table}
}

// epoch applies chunks, seals the epoch and, when commit, commits it.
func (r *overwriteRun) epoch(ctx context.Context, t *rapid.T, chunks []*types.Chunk, epoch uint64, commit bool) {
	for _, c := range chunks {
		if err := r.m.apply(ctx, c); err != nil {
			t.Fatal(err)
		}
		for {
			out, ok := r.m.queue.Pop()
			if !ok {
				break
			}
			r.out.WriteString(streamtest.Render(stream.ChunkMsg(out), testActor) + "\n")
		}
	}
	if err := r.table.Seal(epoch); err != nil {
		t.Fatal(err)
	}
	r.sealed = epoch
	if commit {
		if err := r.store.Commit(ctx, epoch, nil); err != nil {
			t.Fatal(err)
		}
		r.committed = epoch
	}
}

func heldKeys(held map[int64]string) []int64 {
	var ks []int64
	for k := range held {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func scanRows(ctx context.Context, t *rapid.T, store *storage.Store, tbl plan.Table) string {
	rows, err := ScanAll(ctx, store, tbl)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rows, types.CompareRows)
	return formatRows(rows, tbl.Types)
}
