package stream

import "github.com/sluice-db/sluice/internal/types"

// WatermarkMin combines the watermarks of n inputs per column: the
// combined watermark is the least of the inputs', so it exists only once
// every input has sent one, and is passed on only when it advances. Merge
// uses it over upstream actors, union over its inputs.
type WatermarkMin struct {
	n       int
	perCol  map[int][]types.Datum // column → each input's latest value (nil = none yet)
	emitted map[int]types.Datum
}

// NewWatermarkMin returns a combiner over n inputs.
func NewWatermarkMin(n int) *WatermarkMin {
	return &WatermarkMin{n: n, perCol: map[int][]types.Datum{}, emitted: map[int]types.Datum{}}
}

// Observe records input's watermark wm and returns the combined watermark
// when it advanced. A NULL watermark bounds nothing and is ignored.
func (w *WatermarkMin) Observe(input int, wm *Watermark) (*Watermark, bool) {
	if wm.Value == nil || input < 0 || input >= w.n {
		return nil, false
	}
	vals := w.perCol[wm.Col]
	if vals == nil {
		vals = make([]types.Datum, w.n)
		w.perCol[wm.Col] = vals
	}
	if vals[input] == nil || types.Compare(wm.Value, vals[input]) > 0 {
		vals[input] = wm.Value
	}
	low := vals[0]
	for _, v := range vals {
		if v == nil {
			return nil, false
		}
		if types.Compare(v, low) < 0 {
			low = v
		}
	}
	if prev, ok := w.emitted[wm.Col]; ok && types.Compare(low, prev) <= 0 {
		return nil, false
	}
	w.emitted[wm.Col] = low
	return &Watermark{Col: wm.Col, Value: low}, true
}
