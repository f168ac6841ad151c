package batch

import (
	"sync/atomic"

	"github.com/cockroachdb/apd/v3"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A query's memory is bounded twice. What the executor keeps (rows
// collected to sort, a hash join's build side, DISTINCT's keys, top-N
// groups, aggregation groups and the values string_agg and array_agg
// gather) is counted against Options.MemoryLimit, the query's own limit;
// and, in grains, against Options.Pool, the memory every
// query running at once shares. Sorts, aggregations, DISTINCT and hash
// joins go to disk (spill.go, partition.go) before either runs out; what
// cannot (one group's string_agg, the rows of one join key) fails the
// query with 53200 instead of taking the process and every session down.
// Counts are estimates of the Go heap a row holds.

// MemoryPool is the query memory of a server, shared by its queries.
type MemoryPool struct {
	limit int64
	grain int64 // what a query takes at a time: 1/64 of the pool, at most 1 MB
	used  atomic.Int64
}

// NewMemoryPool returns a pool of limit bytes (0 or less: no pool).
func NewMemoryPool(limit int64) *MemoryPool {
	if limit <= 0 {
		return nil
	}
	return &MemoryPool{limit: limit, grain: max(1, min(limit/64, 1<<20))}
}

// Used is the memory the running queries hold.
func (p *MemoryPool) Used() int64 { return p.used.Load() }

// Limit is the pool's size.
func (p *MemoryPool) Limit() int64 { return p.limit }

func (p *MemoryPool) take(n int64) bool {
	if p.used.Add(n) <= p.limit {
		return true
	}
	p.used.Add(-n)
	return false
}

// memBudget counts a query's kept bytes; the executor is one goroutine.
type memBudget struct {
	limit    int64 // 0: none
	used     int64
	pool     *MemoryPool // nil: none
	reserved int64       // taken from the pool
}

// grab is the pool memory the budget must add to keep n more bytes.
func (m *memBudget) grab(n int64) int64 {
	over := m.used + n - m.reserved
	if m.pool == nil || over <= 0 {
		return 0
	}
	g := m.pool.grain
	return (over + g - 1) / g * g
}

// take counts n more bytes kept, failing past either limit.
func (m *memBudget) take(n int64) error {
	if m.limit > 0 && m.used+n > m.limit {
		e := sqlerr.Errorf(sqlerr.OutOfMemory,
			"out of memory: the query needs more than its limit of %d MB", m.limit>>20)
		e.Hint = "Raise query_memory_limit (SET query_memory_limit = '4GB'), or make the query keep less: " +
			"filter earlier, aggregate before sorting, or add LIMIT."
		return e
	}
	if g := m.grab(n); g > 0 {
		if !m.pool.take(g) {
			e := sqlerr.Errorf(sqlerr.OutOfMemory,
				"out of memory: the queries running now hold all %d MB of the server's query memory", m.pool.limit>>20)
			e.Hint = "Retry when fewer large queries run, lower query_memory_limit for them, " +
				"or start the server with more --query-memory."
			return e
		}
		m.reserved += g
	}
	m.used += n
	return nil
}

// poolShort reports whether keeping n more bytes would take the query
// past what the pool has left.
func (m *memBudget) poolShort(n int64) bool {
	g := m.grab(n)
	return g > 0 && m.pool.used.Load()+g > m.pool.limit
}

// release counts n bytes no longer kept; the pool keeps its grains until
// the query ends.
func (m *memBudget) release(n int64) { m.used -= n }

// close gives the query's grains back to the pool.
func (m *memBudget) close() {
	if m.pool != nil {
		m.pool.used.Add(-m.reserved)
	}
	m.reserved = 0
}

// keep counts n more bytes kept by the query.
func (x *executor) keep(n int64) error { return x.mem.take(n) }

// release counts n bytes the query no longer keeps.
func (x *executor) release(n int64) { x.mem.release(n) }

// keepRow counts a kept row.
func (x *executor) keepRow(r types.Row) error { return x.keep(rowBytes(r)) }

// rowBytes estimates the heap a row holds: its slice and each datum.
func rowBytes(r types.Row) int64 {
	n := int64(24 + 16*len(r))
	for _, d := range r {
		n += datumBytes(d)
	}
	return n
}

func datumBytes(d types.Datum) int64 {
	switch v := d.(type) {
	case string:
		return int64(len(v))
	case []byte:
		return int64(len(v))
	case *apd.Decimal:
		return 48 + int64(8*len(v.Coeff.Bits()))
	case types.DArray:
		return rowBytes(types.Row(v))
	case types.DInterval:
		return 24
	}
	return 8
}
