package plan

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

func TestHopWindowExpand(t *testing.T) {
	const s = 1_000_000 // a second in micros
	h := &HopWindow{TimeCol: 1, Slide: 2 * s, Size: 6 * s, Origin: 1 * s}
	in := types.NewChunk([]types.Column{
		types.ColumnOf(types.TInt64, int64(1), int64(2), int64(3), int64(4)),
		types.ColumnOf(types.TTimestamp, types.DTimestamp(4*s), types.DTimestamp(-4*s), nil, types.DTimestamp(1<<63-1)),
	}, []types.Op{types.UpdateDelete, types.UpdateInsert, types.Insert, types.Insert})
	out := h.Expand(in, []types.Type{types.TInt64, types.TTimestamp, types.TTimestamp, types.TTimestamp})
	// Row 1 (t = 4 s) is in the windows starting at 3, 1 and -1 s; row 2
	// (t = -4 s, before the origin) in those at -5, -7 and -9 s; a NULL
	// or infinite time is in none. Update halves become plain changes.
	want := []struct {
		id         int64
		start, end int64
		op         types.Op
	}{{1, 3, 9, types.Delete}, {1, 1, 7, types.Delete}, {1, -1, 5, types.Delete},
		{2, -5, 1, types.Insert}, {2, -7, -1, types.Insert}, {2, -9, -3, types.Insert}}
	if out.Cardinality() != len(want) {
		t.Fatalf("%d rows, want %d:\n%v", out.Cardinality(), len(want), out)
	}
	for i, w := range want {
		row := out.Row(i)
		if row[0] != w.id || row[2] != types.DTimestamp(w.start*s) || row[3] != types.DTimestamp(w.end*s) || out.Op(i) != w.op {
			t.Errorf("row %d: %v %v, want %+v", i, row, out.Op(i), w)
		}
	}
	if h.Expand(types.NewChunk([]types.Column{types.ColumnOf(types.TInt64, int64(1)), types.ColumnOf(types.TTimestamp, nil)}, nil),
		[]types.Type{types.TInt64, types.TTimestamp, types.TTimestamp, types.TTimestamp}) != nil {
		t.Error("a chunk of rows without times expanded to rows")
	}
	if (&HopWindow{Slide: 2, Size: 5}).Check() == nil {
		t.Error("a size that is no multiple of the slide passed the check")
	}
}
