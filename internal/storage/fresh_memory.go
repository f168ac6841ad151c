package storage

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The fresh rows of a bulk load wait in memory for their epoch's seal,
// and past a bound they are spilled (statetable_spill.go), which writes
// them a second time. The bound was per state table (32 MiB), so sixteen
// tables loading at once could hold half a gigabyte, and a million-row
// COPY into one table of two actors (71 MB of rows) spilled both halves.
// Now the bound is the store's, on what all its tables hold together
// (Store.spillFrom), and a table whose rows take it past the bound
// spills its oldest, at least spillAtLeast of them, when it holds that
// much (smaller spills would cost a file each for little memory).
//
// The budget trades peak RSS for CPU, and less than a profile of one
// seal suggests. The heap peaks near twice what it holds (Go's GC lets it
// grow by the live heap). Four million-row COPYs in a row into fresh
// tables, server CPU per COPY and its FLUSH and peak RSS, means of eight
// on a quiet machine: per-table bound 1.80 s, 176-216 MiB; a 48 MiB budget
// 1.79 s, 177-210 MiB; 96 MiB (no spill at all) about 10 % less CPU in
// a busier hour but 249-347 MiB, past the 300 MB the issue allows.
//
// Each table keeps its own count, which the store sums when a table adds
// rows. A table that is dropped or rebuilt without sealing never lowers
// its count, so the store forgets a table's count when the table is
// garbage.

// defaultSpillFrom is the fresh bytes all of a store's tables keep in
// memory before the one adding rows spills them.
const defaultSpillFrom = 48 << 20

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
