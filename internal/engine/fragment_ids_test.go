package engine

import (
	"context"
	"testing"
)

// TestFragmentIDsRefill: a plan with more fragments than its job's id
// block holds gets fresh, distinct ids instead of a panic (a view of some
// thirty fragments used to close the client's connection).
func TestFragmentIDsRefill(t *testing.T) {
	e := openTest(t, t.TempDir())
	ids, err := e.IDs(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	f := &fragmentIDs{ctx: context.Background(), e: e, ids: ids}
	seen := map[uint32]bool{}
	for range 200 {
		id := f.next()
		if f.err != nil {
			t.Fatal(f.err)
		}
		if id == 0 || seen[id] {
			t.Fatalf("fragment id %d is zero or given twice", id)
		}
		seen[id] = true
	}
}
