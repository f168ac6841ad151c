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
	out := h.Expand(in, []types.Type{types.TInt64, types.TTimestamp, types.TTimestamp, types.TTimestamp}, nil, nil)
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
	// A column the consumer does not read is left NULL, made or handed
	// out.
	schema := []types.Type{types.TInt64, types.TTimestamp, types.TTimestamp, types.TTimestamp}
	for _, nulls := range []*types.NullHeads{nil, types.NewNullHeads(schema, 2)} {
		narrow := h.Expand(in, schema, []bool{false, true}, nulls)
		for i := range narrow.Cardinality() {
			if row := narrow.Row(i); row[0] != nil || row[2] != out.Row(i)[2] {
				t.Errorf("narrowed row %d: %v", i, row)
			}
		}
		if narrow.Cols[0].Len() != out.Cardinality() {
			t.Errorf("the NULL column holds %d rows, not %d", narrow.Cols[0].Len(), out.Cardinality())
		}
	}
	if h.Expand(types.NewChunk([]types.Column{types.ColumnOf(types.TInt64, int64(1)), types.ColumnOf(types.TTimestamp, nil)}, nil),
		[]types.Type{types.TInt64, types.TTimestamp, types.TTimestamp, types.TTimestamp}, nil, nil) != nil {
		t.Error("a chunk of rows without times expanded to rows")
	}
	if (&HopWindow{Slide: 2, Size: 5}).Check() == nil {
		t.Error("a size that is no multiple of the slide passed the check")
	}
}

// TestHopWindowWatermarks: a watermark w on the time column bounds
// window_start by the first window holding a time at or after w.
func TestHopWindowWatermarks(t *testing.T) {
	h := &HopWindow{TimeCol: 0, Slide: 10, Size: 30, Origin: 5}
	for _, c := range []struct{ wm, start int64 }{{35, 15}, {34, 5}, {5, -15}, {-1, -25}} {
		start, end, ok := h.Watermarks(types.DTimestamp(c.wm))
		if !ok || start != types.DTimestamp(c.start) || end != types.DTimestamp(c.start+30) {
			t.Errorf("watermark %d: start %v end %v ok %v, want %d", c.wm, start, end, ok, c.start)
		}
		// No window holding a time ≥ wm starts before the bound.
		for tm := c.wm; tm < c.wm+40; tm++ {
			last := h.Origin + floorDiv(tm-h.Origin, h.Slide)*h.Slide
			if first := last - h.Size + h.Slide; first < c.start {
				t.Errorf("time %d is in a window starting at %d, below the watermark %d", tm, first, c.start)
			}
		}
	}
	if _, _, ok := h.Watermarks(types.DTimestamp(types.MinTimestampMicros)); ok {
		t.Error("a watermark whose windows start before the range must be none")
	}
}
