package plan

import (
	"fmt"

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
func (h *HopWindow) Expand(in *types.Chunk, schema []types.Type) *types.Chunk {
	copies := int(h.Size / h.Slide)
	n := in.Cardinality() * copies
	cols := make([]types.Column, len(schema))
	for i, t := range schema {
		cols[i] = types.MustColumn(t, n)
	}
	ops := make([]types.Op, 0, n)
	times := in.Cols[h.TimeCol]
	for i := range in.Capacity() {
		if !in.Visible(i) || times.IsNull(i) {
			continue
		}
		t := timeMicros(times.Get(i))
		if t == 1<<63-1 || t == -1<<63 { // ±infinity is in no window
			continue
		}
		last := h.Origin + floorDiv(t-h.Origin, h.Slide)*h.Slide
		op := in.Op(i).Normalize()
		for k := range copies {
			start := last - int64(k)*h.Slide
			if !inRange(start) || !inRange(start+h.Size) || start+h.Size < start {
				continue // a window reaching past the timestamps' range is none
			}
			for c, src := range in.Cols {
				cols[c].AppendFrom(src, i)
			}
			cols[len(in.Cols)].Append(sameKind(times.Get(i), start))
			cols[len(in.Cols)+1].Append(sameKind(times.Get(i), start+h.Size))
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return nil
	}
	return types.NewChunk(cols, ops)
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
	first := h.Origin + floorDiv(t-h.Origin, h.Slide)*h.Slide - h.Size + h.Slide
	if !inRange(first) || !inRange(first+h.Size) {
		return nil, nil, false
	}
	return sameKind(wm, first), sameKind(wm, first+h.Size), true
}
