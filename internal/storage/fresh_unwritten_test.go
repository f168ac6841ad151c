package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
)

// TestInsertFreshUnwrittenMatchesOverlay runs random runs of inserts of
// absent keys, deletes, updates and re-inserts of deleted keys against a
// store that takes the runs as fresh rows beside other writes
// (InsertFreshUnwritten, refused runs row by row), with spills, late
// epochs written to files as they come and merged, and epochs committed
// together, and against one that takes every write through the overlay:
// every read and every commit agree.
func TestInsertFreshUnwrittenMatchesOverlay(t *testing.T) {
	defer func(n, p int) { sealSpillFrom, presealFrom = n, p }(sealSpillFrom, presealFrom)
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		stores := []*Store{openIngest(t, vfs.NewMem(), 1), openIngest(t, vfs.NewMem(), -1)}
		sealSpillFrom = rapid.SampledFrom([]int{1, 1 << 20}).Draw(rt, "sealSpillFrom")
		stores[0].spillFrom = rapid.SampledFrom([]int{0, 1, 60}).Draw(rt, "spillFrom")
		stores[0].spillAtLeast = rapid.SampledFrom([]int{1, 70, defaultSpillAtLeast}).Draw(rt, "spillAtLeast")
		stores[0].presealAfter = rapid.SampledFrom([]time.Duration{-1, time.Nanosecond}).Draw(rt, "presealAfter")
		presealFrom = rapid.SampledFrom([]int{1, 100, 1 << 20}).Draw(rt, "presealFrom")
		shape := freshShapes[rapid.IntRange(0, len(freshShapes)-1).Draw(rt, "shape")]
		tbls := []*StateTable{mustOpenTable(t, stores[0], shape.desc, 1, nil), mustOpenTable(t, stores[1], shape.desc, 1, nil)}
		present := map[int64]bool{}
		var epoch uint64
		for gen := range rapid.IntRange(1, 40).Draw(rt, "steps") {
			switch rapid.IntRange(0, 3).Draw(rt, "kind") {
			case 0, 1:
				insertUnwrittenRun(rt, tbls, shape, present, gen)
			case 2:
				id := rapid.Int64Range(1, 80).Draw(rt, "del")
				if !present[id] {
					break
				}
				delete(present, id)
				for _, tbl := range tbls {
					if err := tbl.Delete(shape.row(nil, id)); err != nil {
						rt.Fatal(err)
					}
				}
			case 3:
				id := rapid.Int64Range(1, 80).Draw(rt, "upd")
				if !present[id] {
					break
				}
				for _, tbl := range tbls {
					if err := tbl.Insert(shape.row(fmt.Sprint("u", id, "g", gen), id)); err != nil {
						rt.Fatal(err)
					}
				}
			}
			if rapid.Bool().Draw(rt, "seal") {
				epoch++
				sealAndMaybeCommit(rt, ctx, stores, tbls, shape.desc, epoch)
			}
			for id := range int64(81) {
				pk := tbls[0].PKOf(shape.row(nil, id))
				a, aok, aerr := tbls[0].Get(ctx, pk)
				b, bok, berr := tbls[1].Get(ctx, pk)
				if aerr != nil || berr != nil || aok != bok || fmt.Sprint(a) != fmt.Sprint(b) {
					rt.Fatalf("get %d: %v %v %v, overlay store %v %v %v", id, a, aok, aerr, b, bok, berr)
				}
			}
		}
	})
}

// insertUnwrittenRun inserts a run of absent keys: fresh (or row by row
// when refused) into the first table, through the overlay into the other.
func insertUnwrittenRun(rt *rapid.T, tbls []*StateTable, shape freshShape, present map[int64]bool, gen int) {
	lo := rapid.Int64Range(1, 60).Draw(rt, "lo")
	var ids []int64
	for id := lo; id < lo+rapid.Int64Range(1, 20).Draw(rt, "n"); id++ {
		if !present[id] {
			present[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	if !shape.ids && rapid.Bool().Draw(rt, "shuffled") {
		ids = rapid.Permutation(ids).Draw(rt, "ids")
	}
	b := types.NewBuilder(shape.desc.Types, len(ids)+1)
	for _, id := range ids {
		b.Append(types.Insert, shape.row(fmt.Sprint("v", id, "g", gen), id))
	}
	c := b.Take()
	rows := make([]int, len(ids))
	for i := range rows {
		rows[i] = i
	}
	ok, err := tbls[0].InsertFreshUnwritten(c, rows)
	if err != nil {
		rt.Fatal(err)
	}
	for _, i := range rows {
		if !ok {
			if err := tbls[0].InsertAbsent(c.Row(i)); err != nil {
				rt.Fatal(err)
			}
		}
		if err := tbls[1].Insert(c.Row(i)); err != nil {
			rt.Fatal(err)
		}
	}
}

// sealAndMaybeCommit seals epoch in both tables and maybe commits it in
// both stores, which must then hold the same rows.
func sealAndMaybeCommit(rt *rapid.T, ctx context.Context, stores []*Store, tbls []*StateTable, desc TableDesc, epoch uint64) {
	for _, tbl := range tbls {
		if err := tbl.Seal(epoch); err != nil {
			rt.Fatal(err)
		}
	}
	if !rapid.Bool().Draw(rt, "commit") {
		return
	}
	for _, s := range stores {
		if err := s.Commit(ctx, epoch, nil); err != nil {
			rt.Fatal(err)
		}
	}
	want := committedRows(rt, stores[1], desc)
	if got := committedRows(rt, stores[0], desc); got != want {
		rt.Fatalf("epoch %d: fresh store\n%s\noverlay store\n%s", epoch, got, want)
	}
}
