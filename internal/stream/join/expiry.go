package join

import (
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// A side with a plan.JoinExpiry deletes, at each barrier, its rows whose
// Col is below the bound its other side's watermark gives: no row of the
// other side to come can match them. The side keeps its rows by Col value
// in memory (expiring.go), filled as rows are stored and,
// after a restart, from a scan of its state (start); an expired row is
// removed from the state and the cache as a retracted row would be,
// without output. An index table in the store did the same at four
// writes per row and cost Nexmark q7 40 % of its throughput.

// expirySpec is a validated plan.JoinExpiry.
type expirySpec struct {
	col, wmCol int
	bound      expr.Expr    // over the other side's watermark
	in         []types.Type // the watermark's type
	ints       bool         // Col's values order as int64s (types.OrderInt64)
}

// intOrdered reports whether t's values are int64-ordered datums.
func intOrdered(t types.Type) bool {
	switch t.ID {
	case types.Int16, types.Int32, types.Int64, types.Date, types.Time, types.Timestamp, types.Timestamptz:
		return true
	}
	return false
}

// expiryState is a side's expiry at run time.
type expiryState struct {
	due expiring
	// wm is the other side's latest watermark on wmCol; bound is the
	// expiry bound it last gave (nil: none yet, or none computable).
	wm, bound types.Datum
}

func newExpirySpec(name string, e *plan.JoinExpiry, own, other []types.Type) (*expirySpec, error) {
	if e == nil {
		return nil, nil
	}
	if e.Col < 0 || e.Col >= len(own) || e.WatermarkCol < 0 || e.WatermarkCol >= len(other) {
		return nil, fmt.Errorf("join: %s expiry columns %d/%d out of range", name, e.Col, e.WatermarkCol)
	}
	in := slices.Clone(other[e.WatermarkCol : e.WatermarkCol+1])
	bound, err := expr.Build(e.Bound, in)
	if err != nil {
		return nil, fmt.Errorf("join: %s expiry bound: %w", name, err)
	}
	if bound.Type() != own[e.Col] {
		return nil, fmt.Errorf("join: %s expiry bound is %s, column %d is %s", name, bound.Type(), e.Col, own[e.Col])
	}
	return &expirySpec{col: e.Col, wmCol: e.WatermarkCol, bound: bound, in: in, ints: intOrdered(own[e.Col])}, nil
}

// noteExpiryWatermark records watermark w of side s for the other side's
// expiry.
func (j *HashJoin) noteExpiryWatermark(s int, w *stream.Watermark) {
	o := j.sides[1-s]
	if o.expiry == nil || o.expiry.wmCol != w.Col || w.Value == nil {
		return
	}
	if x := &o.exp; x.wm == nil || types.Compare(w.Value, x.wm) > 0 {
		x.wm = w.Value
	}
}

// noteExpiring records a stored row for expiry, with its place in the
// side's deferred writes (deferredTable.lastTag; -1: none). A row whose
// Col is NULL never satisfies X ≥ E and stays until retracted.
func (s *side) noteExpiring(row types.Row, tag int64) {
	if s.expiry == nil || row[s.expiry.col] == nil {
		return
	}
	s.exp.due.push(row[s.expiry.col], row, tag)
}

// expire deletes the side's rows below the bound its other side's latest
// watermark gives. A row retracted since it was noted is deleted again,
// which changes nothing. It drains at every barrier, whether the bound
// moved or not: the bound comes from the other side, so rows of this side
// can arrive below an unmoved one (the other side's source ran ahead and
// finished or went idle), and they must go too.
func (s *side) expire(ectx *expr.Context) error {
	x := &s.exp
	if s.expiry == nil || x.wm == nil {
		return nil
	}
	// A bound replaces the last; none (an overflow far from any real
	// time) keeps it: this is only cleaning.
	bound, err := expr.EvalRow(ectx, s.expiry.bound, types.Row{x.wm}, s.expiry.in)
	if err == nil && bound != nil {
		x.bound = bound
	}
	if x.bound == nil || x.due.empty() {
		return nil
	}
	nullSafe := make([]bool, len(s.keys)) // NULL keys are kept by no side
	return x.due.drainBelow(x.bound, func(row types.Row, tag int64) error {
		key, _ := s.keyOf(nil, row, nullSafe)
		if s.deferred != nil && s.deferred.drop(tag, row) { // never written to the table
			return s.uncache(key, row)
		}
		return s.remove(key, row, 0)
	})
}
