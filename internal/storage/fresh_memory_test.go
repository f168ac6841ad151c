package storage

import (
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// unsealedSpilled reports whether any unsealed fresh rows of t are in a
// spill file.
func unsealedSpilled(t *StateTable) bool { return t.hasUnsealedSpills() }

// TestSpillBoundIsTheStores: the bound on fresh rows kept in memory is
// what all tables hold together; the table whose rows pass it spills its
// own, and one below it alone does not.
func TestSpillBoundIsTheStores(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 1)
	s.spillFrom, s.spillAtLeast = 40_000, 1000 // rows of rowIDDesc are about 10 bytes
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
