package types

import "testing"

func TestVecSet(t *testing.T) {
	v := ColumnOf(TInt64, int64(1), nil, int64(3))
	v.Set(0, nil)
	v.Set(1, int64(7))
	if v.Get(0) != nil || v.Get(1) != int64(7) || v.Get(2) != int64(3) {
		t.Fatalf("after Set: %v %v %v", v.Get(0), v.Get(1), v.Get(2))
	}
}

// TestHeadSharesValuesAndCutsNulls: a head holds the first n rows, NULLs
// included, and no NULL bit past them.
func TestHeadSharesValuesAndCutsNulls(t *testing.T) {
	c := ColumnOf(TInt64, int64(1), nil, int64(3), nil)
	for i := 4; i < 130; i++ {
		if i%7 == 0 {
			c.Append(nil)
		} else {
			c.Append(int64(i))
		}
	}
	for _, n := range []int{0, 1, 2, 63, 64, 65, 100, 130} {
		h := Head(c, n)
		if h.Len() != n {
			t.Fatalf("head %d: %d rows", n, h.Len())
		}
		for i := range n {
			if h.IsNull(i) != c.IsNull(i) || h.Get(i) != c.Get(i) {
				t.Fatalf("head %d row %d: %v, want %v", n, i, h.Get(i), c.Get(i))
			}
		}
		nulls := 0
		for i := range n {
			if c.IsNull(i) {
				nulls++
			}
		}
		if got := h.(*Vec[int64]).Nulls.Count(); got != nulls {
			t.Fatalf("head %d: %d NULL bits, want %d", n, got, nulls)
		}
	}
	z := ZeroColumn(TVarchar, 3)
	if z.Len() != 3 || z.Get(2) != "" || z.IsNull(0) {
		t.Fatalf("zero column: %d rows, %v", z.Len(), z.Get(2))
	}
}
