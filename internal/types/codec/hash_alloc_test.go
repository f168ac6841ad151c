package codec

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// HashRow runs for every state-table write, Get and Scan (the vnode of the
// key): its scratch buffer must stay on the stack for scalar columns.
func TestHashRowDoesNotAllocate(t *testing.T) {
	ts := []types.Type{types.TInt64, types.TVarchar, types.TFloat64, types.TBool, types.TDate, types.TInt32}
	row := types.Row{int64(42), "a string key of some length", 1.5, true, types.DDate(19000), nil}
	var sink uint64
	if n := testing.AllocsPerRun(100, func() { sink += HashRow(row, ts) }); n != 0 {
		t.Fatalf("HashRow allocates %v times per call, want 0", n)
	}
	_ = sink
}
