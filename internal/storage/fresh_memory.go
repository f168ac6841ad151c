package storage

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The fresh rows of a bulk load wait in memory for their epoch's seal,
// and past a bound they are spilled (statetable_spill.go), which writes
// them a second time. The bound was per state table (32 MiB), so a
// million-row COPY into a table of two actors (71 MB of rows) spilled
// half of them, about 0.35 of the 2.6 CPU seconds of the COPY and its
// flush, while sixteen tables loading at once could hold a gigabyte. Now
// the bound is the store's, on what all its tables hold together
// (Store.spillFrom, 96 MiB), and a table whose rows take it past the
// bound spills its own when it holds at least spillAtLeast of them
// (smaller spills would cost a file each for little memory). One load
// gets the whole budget; many share it.
//
// The heap peaks near twice what it holds (Go's GC lets it grow by the
// live heap), so the budget bounds peak RSS too. Four million-row COPYs
// in a row into fresh tables (with COPY's column vectors reused too)
// peaked at 249-277 MiB, against 234-236 MiB with the per-table bound,
// for 12 % less CPU: 1.92 against 2.17 s per COPY and its FLUSH, means
// of eight. A 48 MiB budget peaked at 226-229 MiB for 2.03 s.
//
// Each table keeps its own count, which the store sums when a table adds
// rows. A table that is dropped or rebuilt without sealing never lowers
// its count, so the store forgets a table's count when the table is
// garbage.

// defaultSpillFrom is the fresh bytes all of a store's tables keep in
// memory before the one adding rows spills them.
const defaultSpillFrom = 96 << 20

// defaultSpillAtLeast is the fewest bytes a table spills.
const defaultSpillAtLeast = 8 << 20

// freshMemory is the fresh-row bytes the store's tables keep in memory.
type freshMemory struct {
	mu     sync.Mutex
	counts map[*atomic.Int64]struct{}
}

// held returns t's count, registered on first use.
func (t *StateTable) held() *atomic.Int64 {
	if t.freshHeld == nil {
		m := &t.store.freshMem
		c := new(atomic.Int64)
		m.mu.Lock()
		if m.counts == nil {
			m.counts = make(map[*atomic.Int64]struct{})
		}
		m.counts[c] = struct{}{}
		m.mu.Unlock()
		runtime.AddCleanup(t, m.forget, c)
		t.freshHeld = c
	}
	return t.freshHeld
}

func (m *freshMemory) forget(c *atomic.Int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.counts, c)
}

// total returns the bytes all tables hold.
func (m *freshMemory) total() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for c := range m.counts {
		n += c.Load()
	}
	return n
}
