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
			n := rapid.IntRange(0, 400).Draw(rt, label+" rows")
			// Few NULLs (or every row NULL): whole bitmap words stay empty.
			nulls := map[int]bool{}
			if n > 0 {
				for k := rapid.IntRange(0, 4).Draw(rt, label+" nulls"); k > 0; k-- {
					// Word and bit drawn apart: rapid favours small values.
					w := rapid.IntRange(0, (n-1)/64).Draw(rt, "word")
					nulls[min(w*64+rapid.IntRange(0, 63).Draw(rt, "bit"), n-1)] = true
				}
			}
			allNull := rapid.IntRange(0, 9).Draw(rt, label+" all null") == 0
			v := MustColumn(TInt64, 0).(*Vec[int64])
			for i := range n {
				if nulls[i] || allNull {
					v.Append(nil)
				} else {
					v.Append(int64(i))
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
