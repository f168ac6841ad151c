package window

import (
	"math"

	"github.com/sluice-db/sluice/internal/plan"
)

// Unbounded is a reach without bound.
const Unbounded = math.MaxInt64

// Reach bounds the rows whose values a change can alter. When rows are
// inserted or deleted between rows lo and hi (positions after the
// change), only rows lo-back … hi+fwd can see other values, once each end
// is widened by one row and then to whole peer groups. whole reports that
// every row can (the values depend on the partition's size).
func Reach(calls []plan.WindowCall) (back, fwd int64, whole bool) {
	for _, c := range calls {
		b, f := int64(0), int64(0)
		switch c.Kind {
		case plan.WindowRowNumber, plan.WindowRank, plan.WindowDenseRank:
			f = Unbounded
		case plan.WindowPercentRank, plan.WindowCumeDist, plan.WindowNtile:
			whole = true
		case plan.WindowLag, plan.WindowLead:
			off := c.Offset
			if c.Kind == plan.WindowLead {
				off = -off
			}
			// lag(k) reads k rows back: a change reaches k rows forward.
			if off >= 0 {
				f = off
			} else {
				b = -off
			}
		default:
			b = endReach(c.Frame.End)
			f = startReach(c.Frame.Start)
		}
		back, fwd = max(back, b), max(fwd, f)
	}
	return back, fwd, whole
}

// endReach: how far back a change is seen through frames ending at b.
func endReach(b plan.FrameBound) int64 {
	switch b.Kind {
	case plan.UnboundedFollowing:
		return Unbounded
	case plan.OffsetFollowing:
		return b.Offset
	}
	return 0
}

// startReach: how far forward a change is seen through frames starting
// at b.
func startReach(b plan.FrameBound) int64 {
	switch b.Kind {
	case plan.UnboundedPreceding:
		return Unbounded
	case plan.OffsetPreceding:
		return b.Offset
	}
	return 0
}
