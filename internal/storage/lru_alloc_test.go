//go:build !race

package storage

import "testing"

// TestLRUHitDoesNotAllocate guards the executors' per-row path: a hit by
// key bytes, and a Put that evicts into a full cache, allocate nothing.
// (The race detector adds allocations of its own, hence the build tag.)
func TestLRUHitDoesNotAllocate(t *testing.T) {
	c := NewLRU[string, int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	key := []byte("a")
	if n := testing.AllocsPerRun(100, func() { GetBytes(c, key) }); n != 0 {
		t.Errorf("GetBytes hit: %v allocations", n)
	}
	ints := NewLRU[int, int](2)
	i := 0
	if n := testing.AllocsPerRun(100, func() { i++; ints.Put(i, i) }); n != 0 {
		t.Errorf("evicting Put: %v allocations", n)
	}
}
