package batch

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A query's memory is bounded: what the executor keeps (rows collected to
// sort, a hash join's build side, DISTINCT's keys, top-N groups,
// aggregation groups and the values string_agg and array_agg gather) is
// counted against Options.MemoryLimit, and a query that would pass it
// fails with 53200 instead of taking the process (and every session) down.
// Counts are estimates of the Go heap a row holds; nothing is released
// before the query ends, so the count is an upper bound of what is live.
// Spilling to disk past the limit is not done yet.

// memBudget counts a query's kept bytes; the executor is one goroutine.
type memBudget struct {
	limit int64 // 0: none
	used  int64
}

// keep counts n more bytes kept, failing past the limit.
func (x *executor) keep(n int64) error {
	if x.mem.limit <= 0 {
		return nil
	}
	x.mem.used += n
	if x.mem.used <= x.mem.limit {
		return nil
	}
	e := sqlerr.Errorf(sqlerr.OutOfMemory,
		"out of memory: the query needs more than its limit of %d MB", x.mem.limit>>20)
	e.Hint = "Raise query_memory_limit (SET query_memory_limit = '4GB'), or make the query keep less: " +
		"filter earlier, aggregate before sorting, or add LIMIT."
	return e
}

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
