package storage

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// unsealedSpilled reports whether any unsealed fresh rows of t are in a
// spill file.
func unsealedSpilled(t *StateTable) bool { return t.hasUnsealedSpills() }

// TestSpillBoundIsTheStores: the bound on fresh rows kept in memory is
// what all tables hold together; the table whose rows pass it spills its
// own, and one below it alone does not.
func TestSpillBoundIsTheStores(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 1)
	// A row of rowIDDesc counts about 28 bytes: 10 encoded, 18 for its id,
	// vnode and span.
	s.spillFrom, s.spillAtLeast = 100_000, 1000
	a := mustOpenTable(t, s, rowIDDesc(41), 1, nil)
	b := mustOpenTable(t, s, rowIDDesc(42), 2, nil)
	insertFreshRange(t, a, 1, 3000)
	if unsealedSpilled(a) || s.freshMem.total() == 0 {
		t.Fatalf("a alone spilled (%v) or counts nothing (%d)", unsealedSpilled(a), s.freshMem.total())
	}
	held := s.freshMem.total()
	insertFreshRange(t, b, 1, 3000)
	if !unsealedSpilled(b) || unsealedSpilled(a) {
		t.Fatalf("past the store's bound: a spilled %v, b spilled %v; want only b", unsealedSpilled(a), unsealedSpilled(b))
	}
	if got := s.freshMem.total(); got != held {
		t.Fatalf("after b's spill the tables hold %d bytes, want a's %d", got, held)
	}
}

// TestFreshMemoryForgetsGarbageTables: a table abandoned with fresh rows
// in memory (its actor dropped before a seal) stops counting once it is
// garbage, so later loads get the whole bound again.
func TestFreshMemoryForgetsGarbageTables(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 1)
	func() {
		tbl := mustOpenTable(t, s, rowIDDesc(43), 1, nil)
		insertFreshRange(t, tbl, 1, 1000)
	}()
	if s.freshMem.total() == 0 {
		t.Fatal("fresh rows not counted")
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.freshMem.total() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a garbage table still counts %d bytes", s.freshMem.total())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFreshMemoryFallsAtCommit: rows sealed into a batch count until
// their epoch commits and the table prunes them.
func TestFreshMemoryFallsAtCommit(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 0) // seals into the epoch's batch
	tbl := mustOpenTable(t, s, rowIDDesc(44), 1, nil)
	insertFreshRange(t, tbl, 1, 100)
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if s.freshMem.total() == 0 {
		t.Fatal("sealed rows stopped counting before their commit")
	}
	if err := s.Commit(t.Context(), 1, nil); err != nil {
		t.Fatal(err)
	}
	tbl.maybePrune()
	if n := s.freshMem.total(); n != 0 {
		t.Fatalf("%d bytes counted after the commit", n)
	}
}

// TestSpillTakesTheOldestRowsInGrowingSlices: past the store's bound a
// table spills its oldest chunks, at least spillAtLeast bytes and more as
// the epoch's spills add up, keeps the newest in memory, and the seal
// spills those too before merging; every row reads back, before the
// seal and after the commit.
func TestSpillTakesTheOldestRowsInGrowingSlices(t *testing.T) {
	defer func(n int) { sealSpillFrom = n }(sealSpillFrom)
	sealSpillFrom = 1
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 1)
	tbl := mustOpenTable(t, s, rowIDDesc(44), 1, nil)
	insertFreshRange(t, tbl, 1, 101) // one chunk of 100 rows
	chunk := tbl.fresh[0].bytes()
	s.spillFrom, s.spillAtLeast = 3*chunk, chunk
	for lo := int64(101); lo < 4001; lo += 100 {
		insertFreshRange(t, tbl, lo, lo+100)
	}
	// Each spill took the oldest chunks; the k-th spill at least
	// 1+k/spillGrowth of them.
	var sizes []int
	var last *spillFile
	for i, fc := range tbl.fresh {
		switch {
		case fc.spill == nil:
			for _, later := range tbl.fresh[i:] {
				if later.spill != nil {
					t.Fatalf("chunk %d in memory is older than a spilled one", i)
				}
			}
		case fc.spill != last:
			last, sizes = fc.spill, append(sizes, 1)
		default:
			sizes[len(sizes)-1]++
		}
	}
	for k, n := range sizes {
		if want := 1 + k/spillGrowth; n != want {
			t.Fatalf("spill %d took %d chunks, want %d (all: %v)", k, n, want, sizes)
		}
	}
	if len(sizes) < spillGrowth+2 {
		t.Fatalf("%d spills, too few to see them grow", len(sizes))
	}
	check := func(when string) {
		t.Helper()
		for id := int64(1); id <= 4000; id += 37 {
			row, ok, err := tbl.Get(ctx, types.Row{id})
			if err != nil || !ok || row[0] != fmt.Sprint("v", id) {
				t.Fatalf("%s: Get %d = %v %v %v", when, id, row, ok, err)
			}
		}
	}
	check("spilled")
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	for _, fc := range tbl.fresh {
		if fc.spill == nil {
			t.Fatal("the seal merged rows from memory, want them spilled first")
		}
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	check("committed")
	if got := len(scanAll(t, tbl, nil)); got != 4000 {
		t.Fatalf("%d rows after the commit, want 4000", got)
	}
}
