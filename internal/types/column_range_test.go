package types

import (
	"testing"

	"pgregory.net/rapid"
)

// TestAppendRangeMatchesAppendFrom: appending a range of rows in one call
// leaves the column exactly as appending them one by one does, NULLs
// included, whatever the column held before.
func TestAppendRangeMatchesAppendFrom(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		gen := func(label string) *Vec[int64] {
			v := MustColumn(TInt64, 0).(*Vec[int64])
			// Sparse NULLs leave whole bitmap words empty.
			odds := rapid.SampledFrom([]int64{1, 8, 300}).Draw(rt, label+" null odds")
			for _, x := range rapid.SliceOfN(rapid.Int64Range(0, odds), 0, 400).Draw(rt, label) {
				if x == 0 {
					v.Append(nil)
				} else {
					v.Append(x)
				}
			}
			return v
		}
		src, dst := gen("src"), gen("dst")
		from := rapid.IntRange(0, src.Len()).Draw(rt, "from")
		to := rapid.IntRange(from, src.Len()).Draw(rt, "to")
		want := MustColumn(TInt64, 0)
		for i := range dst.Len() {
			want.AppendFrom(dst, i)
		}
		for i := from; i < to; i++ {
			want.AppendFrom(src, i)
		}
		dst.AppendRange(src, from, to)
		if dst.Len() != want.Len() {
			rt.Fatalf("%d rows, want %d", dst.Len(), want.Len())
		}
		for i := range want.Len() {
			if dst.IsNull(i) != want.IsNull(i) || dst.Get(i) != want.Get(i) {
				rt.Fatalf("row %d: %v, want %v", i, dst.Get(i), want.Get(i))
			}
		}
	})
}
