package storage

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// TestSpilledChunksKeepNoRowsAndFindThemInTheirFiles: once fresh rows are
// spilled, their chunks keep no per-row ids, and Get finds each row in its
// spill file through the marks, also when chunks of different spills
// cover overlapping id ranges, before the seal and after it (from the
// sealed file), until the commit.
func TestSpilledChunksKeepNoRowsAndFindThemInTheirFiles(t *testing.T) {
	defer func(n int) { rawMarkEvery = n }(rawMarkEvery)
	rawMarkEvery = 2
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 1)
	s.spillFrom, s.spillAtLeast = 1, 1 // every chunk spills as it comes
	tbl := mustOpenTable(t, s, rowIDDesc(3), 1, nil)
	insert := func(ids ...int64) {
		t.Helper()
		b := types.NewBuilder(tbl.Desc().Types, len(ids)+1)
		rows := make([]int, len(ids))
		for i, id := range ids {
			b.Append(types.Insert, types.Row{fmt.Sprint("v", id), id})
			rows[i] = i
		}
		if ok, err := tbl.InsertFresh(b.Take(), rows); !ok || err != nil {
			t.Fatalf("InsertFresh %v: %v %v", ids, ok, err)
		}
	}
	// Three spills whose ranges overlap: [-90, 90], [5, 60], [-41, 41].
	insert(-90, -7, 1, 2, 3, 10, 20, 30, 70, 80, 90)
	insert(5, 15, 25, 35, 60)
	insert(-41, 40, 41)
	in := map[int64]bool{}
	for _, id := range []int64{-90, -7, 1, 2, 3, 10, 20, 30, 70, 80, 90, 5, 15, 25, 35, 60, -41, 40, 41} {
		in[id] = true
	}
	check := func(when string) {
		t.Helper()
		for id := int64(-100); id < 100; id++ {
			row, ok, err := tbl.Get(ctx, types.Row{id})
			if err != nil || ok != in[id] || ok && row[0] != fmt.Sprint("v", id) {
				t.Fatalf("%s: Get %d = %v %v %v, want found %v", when, id, row, ok, err, in[id])
			}
		}
	}
	for _, fc := range tbl.fresh {
		if fc.spill == nil || fc.ids != nil || fc.vnodes != nil {
			t.Fatalf("a chunk of %d rows after its spill: spill %v, %d ids, %d vnodes kept", fc.n, fc.spill != nil, len(fc.ids), len(fc.vnodes))
		}
	}
	check("spilled")
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	check("sealed")
}
