package join

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
)

// TestExpiringDrainsExactlyTheRowsBelow drives the expiring rows with
// times that rise with some disorder (as rows from several upstream
// actors do), occasional far-back ones, and drains at rising bounds: each
// drain must return exactly the rows below its bound that are still
// there, whichever of the queues and the heap holds them.
//
// With blocks of two rows too, so that queues cross their blocks' ends;
// each row's tag must come back with it.
func TestExpiringDrainsExactlyTheRowsBelow(t *testing.T) {
	defer func(n int) { queueBlock = n }(queueBlock)
	for _, block := range []int{1024, 2} {
		queueBlock = block
		checkExpiringDrains(t)
	}
}

func checkExpiringDrains(t *testing.T) {
	for _, ints := range []bool{true, false} {
		rapid.Check(t, func(rt *rapid.T) {
			h := &expiring{ints: ints}
			var live []int64 // the model: times of the rows not drained
			now := int64(0)
			rt.Repeat(map[string]func(*rapid.T){
				"push": func(rt *rapid.T) {
					now += rapid.Int64Range(0, 5).Draw(rt, "step")
					x := now - rapid.Int64Range(0, 3).Draw(rt, "late")
					if rapid.IntRange(0, 9).Draw(rt, "far") == 0 {
						x -= rapid.Int64Range(0, 100).Draw(rt, "back")
					}
					h.push(types.DTimestamp(x), types.Row{x}, x)
					live = append(live, x)
				},
				"drain": func(rt *rapid.T) {
					bound := now - rapid.Int64Range(-2, 20).Draw(rt, "behind")
					var got, want []int64
					err := h.drainBelow(types.DTimestamp(bound), func(r types.Row, tag int64) error {
						if tag != r[0].(int64) {
							rt.Fatalf("row %v drained with tag %d", r, tag)
						}
						got = append(got, r[0].(int64))
						return nil
					})
					if err != nil {
						rt.Fatal(err)
					}
					keep := live[:0]
					for _, x := range live {
						if x < bound {
							want = append(want, x)
						} else {
							keep = append(keep, x)
						}
					}
					live = keep
					slices.Sort(got)
					slices.Sort(want)
					if !slices.Equal(got, want) {
						rt.Fatalf("drain below %d: got %v, want %v", bound, got, want)
					}
					if h.empty() != (len(live) == 0) {
						rt.Fatalf("empty() is %v with %d rows left", h.empty(), len(live))
					}
				},
			})
		})
	}
}
