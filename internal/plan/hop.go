package plan

import (
	"fmt"
	"unsafe"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// MaxHopCopies bounds the windows one row is in.
const MaxHopCopies = 1024

// Check reports a malformed hop window.
func (h *HopWindow) Check() error {
	if h.Slide <= 0 || h.Size <= 0 || h.Size%h.Slide != 0 || h.Size/h.Slide > MaxHopCopies {
		return fmt.Errorf("plan: hop window slide %d, size %d", h.Slide, h.Size)
	}
	return nil
}

// Expand returns the rows of in, once per window holding each, with
// window_start and window_end appended (schema is the output's types),
// or nil for no rows. An update pair becomes a delete and an insert per
// window: the pairs of different windows would otherwise interleave.
// read marks the input columns the consumer reads (nil: all); the others
// are left NULL rather than copied once per window, heads of nulls' columns
// when it is set.
func (h *HopWindow) Expand(in *types.Chunk, schema []types.Type, read []bool, nulls *types.NullHeads) *types.Chunk {
	copies := int(h.Size / h.Slide)
	n := in.Cardinality() * copies
	idx := make([]int, 0, n)      // the input row of each output row
	starts := make([]int64, 0, n) // its window's start
	ops := make([]types.Op, 0, n)
	times := in.Cols[h.TimeCol]
	for i := range in.Capacity() {
		if !in.Visible(i) || times.IsNull(i) {
			continue
		}
		t := timeAt(times, i)
		if t == 1<<63-1 || t == -1<<63 { // ±infinity is in no window
			continue
		}
		last := h.PaneOf(t)
		op := in.Op(i).Normalize()
		for k := range copies {
			start := last - int64(k)*h.Slide
			if !inRange(start) || !inRange(start+h.Size) || start+h.Size < start {
				continue // a window reaching past the timestamps' range is none
			}
			idx, starts, ops = append(idx, i), append(starts, start), append(ops, op)
		}
	}
	if len(ops) == 0 {
		return nil
	}
	cols := make([]types.Column, len(schema))
	for c, src := range in.Cols {
		if read == nil || read[c] {
			cols[c] = src.Gather(idx)
		} else if nulls != nil {
			cols[c] = nulls.Get(c, len(idx))
		} else {
			cols[c] = types.NullColumn(schema[c], len(idx))
		}
	}
	ends := make([]int64, len(starts))
	for j, s := range starts {
		ends[j] = s + h.Size
	}
	w := len(in.Cols)
	cols[w], cols[w+1] = timeColumn(schema[w], starts), timeColumn(schema[w+1], ends)
	return types.NewChunk(cols, ops)
}

// timeAt is row i of a timestamp or timestamptz column, in micros.
func timeAt(c types.Column, i int) int64 {
	switch v := c.(type) {
	case *types.Vec[types.DTimestamp]:
		return int64(v.Vals[i])
	case *types.Vec[types.DTimestamptz]:
		return int64(v.Vals[i])
	}
	return timeMicros(c.Get(i))
}

// timeColumn is a column of type t (timestamp or timestamptz) holding
// micros, which it takes over: both types are int64s, so the slice is
// reinterpreted rather than copied.
func timeColumn(t types.Type, micros []int64) types.Column {
	if t.ID == types.Timestamptz {
		return &types.Vec[types.DTimestamptz]{Typ: t, Vals: asMicros[types.DTimestamptz](micros)}
	}
	return &types.Vec[types.DTimestamp]{Typ: t, Vals: asMicros[types.DTimestamp](micros)}
}

// asMicros reinterprets micros as a slice of T, which shares its memory.
func asMicros[T ~int64](micros []int64) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(micros))), len(micros))
}

func timeMicros(d types.Datum) int64 {
	if t, ok := d.(types.DTimestamptz); ok {
		return int64(t)
	}
	return int64(d.(types.DTimestamp))
}

// sameKind is micros as a datum of like's type.
func sameKind(like types.Datum, micros int64) types.Datum {
	if _, ok := like.(types.DTimestamptz); ok {
		return types.DTimestamptz(micros)
	}
	return types.DTimestamp(micros)
}

// inRange reports a finite timestamp in the representable range.
func inRange(us int64) bool {
	return us >= types.MinTimestampMicros && us < types.EndTimestampMicros
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// Watermarks returns the watermarks on window_start and window_end that a
// watermark wm on the time column implies: every later row's time t ≥ wm
// is in no window starting before the last window start at or before wm
// minus the windows it overlaps (Size - Slide). ok is false outside the
// timestamps' range.
func (h *HopWindow) Watermarks(wm types.Datum) (start, end types.Datum, ok bool) {
	t := timeMicros(wm)
	if !inRange(t) {
		return nil, nil, false
	}
	first := h.PaneOf(t) - h.Size + h.Slide
	if !inRange(first) || !inRange(first+h.Size) {
		return nil, nil, false
	}
	return sameKind(wm, first), sameKind(wm, first+h.Size), true
}

// Grid is where the windows' starts are aligned: Origin reduced into
// [0, Slide), the same starts every Slide. Binning from Origin itself (the
// Unix epoch, about -9.5e14 micros from 2000) made t - Origin overflow for
// times in the last 30 years of the timestamp range, which put them in
// windows off the grid.
func (h *HopWindow) Grid() int64 {
	g := h.Origin % h.Slide
	if g < 0 {
		g += h.Slide
	}
	return g
}

// PaneOf is the start of the slide-wide pane holding time t (micros): the
// last window start at or before t.
func (h *HopWindow) PaneOf(t int64) int64 {
	g := h.Grid()
	return g + floorDiv(t-g, h.Slide)*h.Slide
}

// BinStart is date_bin(width, $col, origin) of the timestamp or
// timestamptz column col (of type t): the start of the width-wide bin
// holding each row's time, bins aligned at origin (micros). TUMBLE's
// window_start is one, and so is a hop window's pane.
func BinStart(col int, t types.Type, width, origin int64) expr.Desc {
	d := expr.Func("date_bin", expr.Literal(types.DInterval{Micros: width}, types.TInterval), expr.Input(col, t),
		expr.Literal(timeOfType(t, origin), t))
	d.Type = t
	return d
}

// timeOfType is micros as a datum of the time type t.
func timeOfType(t types.Type, micros int64) types.Datum {
	if t.ID == types.Timestamptz {
		return types.DTimestamptz(micros)
	}
	return types.DTimestamp(micros)
}
