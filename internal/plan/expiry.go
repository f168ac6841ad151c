package plan

import (
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// An inner join keyed by ids keeps every row of both sides, although a
// condition on event time often means no future row can match an old
// one: in Nexmark q4 a bid matches an auction only while
// b.date_time ≥ a.date_time, so once the auctions' watermark passes a
// bid's time no auction to come can match it. JoinExpiry describes such a
// bound for one side: its rows whose Col is below Bound — an expression of
// the other side's watermark on WatermarkCol — are deleted at the next
// barrier. That holds for deletes too (no row below a watermark follows,
// not even a retraction), so a deleted row's matches are never
// retracted against it.
//
// Only a side whose input is append-only expires (see expiryOf). The
// bounds come from conjuncts X ≥ E (or X > E, or E ≤ X, E < X) of
// the join's residual or of a filter right above it, where X is a column
// of one side and E is monotone in one watermarked column of the other
// (see MonotoneIn): every future row of the other side has E ≥ E(its
// watermark), so a row with X < E(watermark) can never satisfy X ≥ E.

// JoinExpiry lets an inner join delete one side's rows that can no longer
// match.
type JoinExpiry struct {
	// Col is the side's column compared (X).
	Col int
	// WatermarkCol is the other side's column whose watermark bounds E.
	WatermarkCol int
	// Bound is E over one input column, the other side's watermark.
	Bound expr.Desc
}

// DeriveJoinExpiry sets LeftExpiry and RightExpiry on the inner joins of
// the plan under root (watermarks derived) that have such a bound. Run it
// before state tables get ids.
func DeriveJoinExpiry(root *Node) {
	parents := parentCounts(root)
	eachOnce(root, func(n *Node) {
		switch {
		case n.Kind == KindHashJoin:
			deriveExpiry(n, nil)
		case n.Kind == KindFilter && n.Filter != nil && len(n.Inputs) == 1 && n.Inputs[0] != nil &&
			n.Inputs[0].Kind == KindHashJoin && parents[n.Inputs[0]] == 1:
			// The filter is the join's only reader: its conditions are
			// the join's as far as its output goes.
			deriveExpiry(n.Inputs[0], &n.Filter.Cond)
		}
	})
}

// deriveExpiry sets j's expiries from its residual and, when set, a
// condition over its output.
func deriveExpiry(j *Node, above *expr.Desc) {
	hj := j.HashJoin
	if hj == nil || hj.Type != InnerJoin || len(j.Inputs) != 2 || j.Inputs[0] == nil || j.Inputs[1] == nil {
		return
	}
	var conds []expr.Desc
	if hj.Residual != nil {
		conds = conjuncts(*hj.Residual, conds)
	}
	if above != nil {
		for _, c := range conjuncts(*above, nil) {
			if m, ok := throughOutput(c, hj.Output); ok {
				conds = append(conds, m)
			}
		}
	}
	for _, c := range conds {
		s, e, ok := expiryOf(j, c)
		if !ok {
			continue
		}
		if s == 0 && hj.LeftExpiry == nil {
			hj.LeftExpiry = e
		} else if s == 1 && hj.RightExpiry == nil {
			hj.RightExpiry = e
		}
	}
}

func conjuncts(d expr.Desc, out []expr.Desc) []expr.Desc {
	if d.Kind == expr.KindAnd {
		for _, a := range d.Args {
			out = conjuncts(a, out)
		}
		return out
	}
	return append(out, d)
}

// throughOutput renumbers d's inputs through output (d's column i is
// column output[i]); a negative entry or one out of range refuses.
func throughOutput(d expr.Desc, output []int) (expr.Desc, bool) {
	return expr.RemapInputs(d, func(i int) (int, bool) {
		if i < 0 || i >= len(output) || output[i] < 0 {
			return i, false
		}
		return output[i], true
	})
}

// expiryOf reads one conjunct over j's concatenated row as X ≥ E.
func expiryOf(j *Node, c expr.Desc) (int, *JoinExpiry, bool) {
	if c.Kind != expr.KindFunc || len(c.Args) != 2 {
		return 0, nil, false
	}
	var x, e expr.Desc
	switch c.Name {
	case ">=", ">":
		x, e = c.Args[0], c.Args[1]
	case "<=", "<":
		x, e = c.Args[1], c.Args[0]
	default:
		return 0, nil, false
	}
	x, e = isolate(x, e)
	if x.Kind != expr.KindInput {
		return 0, nil, false
	}
	y, ok := MonotoneIn(e)
	if !ok {
		return 0, nil, false
	}
	lw := len(j.Inputs[0].Schema)
	s, o := 0, 1
	if x.Index >= lw {
		s, o = 1, 0
	}
	if (y >= lw) == (s == 1) || x.Index < 0 || y < 0 || x.Index >= lw+len(j.Inputs[1].Schema) {
		return 0, nil, false // both sides' columns, or out of range
	}
	off := [2]int{0, lw}
	ys := y - off[o]
	if ys >= len(j.Inputs[o].Schema) || !slices.Contains(j.Inputs[o].Watermarks, ys) {
		return 0, nil, false
	}
	bound, ok := throughOutput(e, oneInput(y, lw+len(j.Inputs[1].Schema)))
	if !ok {
		return 0, nil, false
	}
	if !j.Inputs[s].AppendOnly {
		// The executor keeps the side's rows by Col in memory as they are
		// stored; a retraction and re-insert of a key would leave the old
		// entry behind to delete the new row.
		return 0, nil, false
	}
	col := x.Index - off[s]
	// The bound must compare with the column as it is: same type.
	if b, err := expr.Build(bound, j.Inputs[o].Schema[ys:ys+1]); err != nil || b.Type() != j.Inputs[s].Schema[col] {
		return 0, nil, false
	}
	return s, &JoinExpiry{Col: col, WatermarkCol: ys, Bound: bound}, true
}

// isolate turns x ± k ≥ e into x ≥ e ∓ k (and k + x ≥ e into
// x ≥ e - k), so that v.at + INTERVAL '10 seconds' ≥ c.at bounds v.at.
// Only a k whose addition is undone by its subtraction qualifies: an
// integer, or an interval of fixed length (no months or days, which
// vary). Floats round, so they do not.
func isolate(x, e expr.Desc) (expr.Desc, expr.Desc) {
	for x.Kind == expr.KindFunc && len(x.Args) == 2 {
		a := x.Args
		switch {
		case x.Name == "+" && fixedConst(a[1]):
			x, e = a[0], expr.Func("-", e, a[1])
		case x.Name == "-" && fixedConst(a[1]):
			x, e = a[0], expr.Func("+", e, a[1])
		case x.Name == "+" && fixedConst(a[0]):
			x, e = a[1], expr.Func("-", e, a[0])
		default:
			return x, e
		}
	}
	return x, e
}

func fixedConst(d expr.Desc) bool {
	if !isConst(d) {
		return false
	}
	switch {
	case d.Type.IsInteger():
		return true
	case d.Type.ID == types.Interval:
		v, err := types.ParseDatum(*d.Value, d.Type)
		iv, ok := v.(types.DInterval)
		return err == nil && ok && iv.Months == 0 && iv.Days == 0
	}
	return false
}

// oneInput maps concatenated column y to 0 and nothing else (-1, out of
// range), for throughOutput.
func oneInput(y, width int) []int {
	m := make([]int, width)
	for i := range m {
		m[i] = -1
	}
	m[y] = 0
	return m
}
