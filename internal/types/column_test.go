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
}

// TestHeadWritesCopyFirst: Set and Reset on a head never reach the column
// it shares values with, nor another head of it.
func TestHeadWritesCopyFirst(t *testing.T) {
	c := ColumnOf(TInt64, int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0))
	a, b := Head(c, 8), Head(c, 4)
	a.Set(2, int64(7))
	a.Set(3, nil)
	b.Reset()
	for range 6 {
		b.Append(int64(9))
	}
	for i := range 8 {
		if c.Get(i) != int64(0) {
			t.Fatalf("row %d of the shared column is %v", i, c.Get(i))
		}
	}
	if a.Get(2) != int64(7) || !a.IsNull(3) || a.Get(4) != int64(0) || b.Len() != 6 || b.Get(5) != int64(9) {
		t.Fatalf("heads: %v %v %v, %d rows %v", a.Get(2), a.Get(3), a.Get(4), b.Len(), b.Get(5))
	}
}

// TestBuilderUnreadColumnsStayNull: an unread column is NULLs in every
// chunk taken, of every length, also after a taken chunk was recycled and
// filled again.
func TestBuilderUnreadColumnsStayNull(t *testing.T) {
	b := NewBuilder([]Type{TInt64, TVarchar}, 3)
	if err := b.Unread([]bool{false, true}); err != nil {
		t.Fatal(err)
	}
	var chunks []*Chunk
	for i := range 8 {
		if c := b.Append(Insert, Row{int64(i), "x"}); c != nil {
			chunks = append(chunks, c)
			b.Recycle(c) // refills its columns: the head's values are let go
		}
	}
	chunks = append(chunks, b.Take())
	for _, c := range chunks {
		for i := range c.Capacity() {
			if !c.Cols[1].IsNull(i) || c.Cols[1].Get(i) != nil {
				t.Fatalf("unread row %d is %v in\n%s", i, c.Cols[1].Get(i), c)
			}
		}
	}
	if got := chunks[len(chunks)-1].Capacity(); got != 2 {
		t.Fatalf("last chunk has %d rows, want 2", got)
	}
}
