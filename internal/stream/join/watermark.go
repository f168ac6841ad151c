package join

import (
	"bytes"
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// watermarks is what an inner join does with its inputs' watermarks (see
// doc.go, "Watermarks"). A key pair whose two columns both get watermarks
// gets the lesser of the two as the output watermark of both columns: an
// output row's key is at least each side's watermark. On the first key,
// that watermark also closes state: no later row of either side can match
// (or retract) a stored row below it, so those rows are deleted at the
// next barrier.
type watermarks struct {
	latest  [2]map[int]types.Datum // side → key index → latest watermark
	emitted map[int]types.Datum    // key index → last output watermark
	// clean is the output watermark of the first key; cleaned what the
	// state was last cleaned to.
	clean, cleaned types.Datum
	queue          []*stream.Watermark
}

// onWatermark records side s's watermark w and queues the output
// watermarks it advances.
func (j *HashJoin) onWatermark(s int, w *stream.Watermark) {
	j.noteExpiryWatermark(s, w)
	if j.sp.joinType != plan.InnerJoin || w.Value == nil {
		return // outer joins pad with NULLs and keep unmatched rows: no watermark
	}
	wm := &j.wm
	for k, c := range j.sp.sides[s].keys {
		if c != w.Col || j.sp.nullSafe[k] {
			continue
		}
		if wm.latest[s] == nil {
			wm.latest[s] = map[int]types.Datum{}
		}
		if prev, ok := wm.latest[s][k]; ok && types.Compare(w.Value, prev) <= 0 {
			continue
		}
		wm.latest[s][k] = w.Value
		j.advanceKey(k)
	}
}

func (j *HashJoin) advanceKey(k int) {
	wm := &j.wm
	l, r := wm.latest[0][k], wm.latest[1][k]
	if l == nil || r == nil {
		return
	}
	low := l
	if types.Compare(r, l) < 0 {
		low = r
	}
	if prev, ok := wm.emitted[k]; ok && types.Compare(low, prev) <= 0 {
		return
	}
	if wm.emitted == nil {
		wm.emitted = map[int]types.Datum{}
	}
	wm.emitted[k] = low
	if k == 0 {
		wm.clean = low
	}
	nl := len(j.sp.sides[0].types)
	lc, rc := j.sp.sides[0].keys[k], nl+j.sp.sides[1].keys[k]
	for o, c := range j.sp.output {
		if c == lc || c == rc {
			wm.queue = append(wm.queue, &stream.Watermark{Col: o, Value: low})
		}
	}
}

// cleanState deletes both sides' rows below the first key's watermark.
func (j *HashJoin) cleanState(ctx context.Context) error {
	wm := &j.wm
	if wm.clean == nil || (wm.cleaned != nil && types.Compare(wm.clean, wm.cleaned) <= 0) {
		return nil
	}
	for _, s := range j.sides {
		if err := s.deleteBelow(ctx, wm.cleaned, wm.clean); err != nil {
			return err
		}
	}
	wm.cleaned = wm.clean
	return nil
}

// deleteBelow deletes the side's rows whose first join key is in [from,
// bound) (from nil: from the start), and their cache entries.
func (s *side) deleteBelow(ctx context.Context, from, bound types.Datum) error {
	nullSafe := make([]bool, len(s.keys)) // any key: its entry goes
	var key types.Row
	var last []byte // the last join key whose entry went
	err := s.rows.DeleteBetween(ctx, from, bound, func(row types.Row) error {
		key, _ = s.keyOf(key, row, nullSafe)
		k, err := s.encodeKey(key)
		if err != nil {
			return err
		}
		// The rows come in key order: one delete per key.
		if last == nil || !bytes.Equal(k, last) {
			s.cache.Delete(string(k))
			last = append(last[:0], k...)
		}
		return nil
	})
	clear(key)
	if err != nil {
		return fmt.Errorf("join: delete closed rows: %w", err)
	}
	return nil
}
