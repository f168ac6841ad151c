package types

import "testing"

// TestBuilderSizesChunksByUse: a new builder's first chunk starts small (a
// statement's one row must not cost a whole chunk's columns), and a chunk
// after a full one starts at full size, so a bulk stream does not regrow
// its columns chunk after chunk.
func TestBuilderSizesChunksByUse(t *testing.T) {
	capOf := func(c *Chunk) int { return cap(c.Cols[0].(*Vec[int64]).Vals) }
	b := NewBuilder([]Type{TInt64, TVarchar}, 1024)
	b.Append(Insert, Row{int64(1), "a"})
	if c := b.Take(); capOf(c) > minBuilderCap {
		t.Fatalf("a one-row chunk of a new builder has capacity %d", capOf(c))
	}
	var full *Chunk
	for i := 0; full == nil; i++ {
		full = b.Append(Insert, Row{int64(i), "x"})
	}
	if full.Capacity() != 1024 {
		t.Fatalf("full chunk of %d rows", full.Capacity())
	}
	b.Append(Insert, Row{int64(0), "y"})
	if c := b.Take(); capOf(c) != 1024 {
		t.Fatalf("the chunk after a full one started at capacity %d", capOf(c))
	}
	u := NewUnboundedBuilder([]Type{TInt64, TVarchar})
	u.Append(Insert, Row{int64(1), "a"})
	if c := u.Take(); capOf(c) > minBuilderCap {
		t.Fatalf("a one-row chunk of an unbounded builder has capacity %d", capOf(c))
	}
}

// TestBuilderRecycle: a recycled chunk's vectors are filled again from
// empty (same backing arrays, no row of the old chunk left), and a chunk
// that does not fit the builder, or a builder holding rows, is left alone.
func TestBuilderRecycle(t *testing.T) {
	ts := []Type{TInt64, TVarchar}
	b := NewBuilder(ts, 2)
	b.Append(Insert, Row{int64(1), "a"})
	first := b.Append(Insert, Row{int64(2), "b"})
	ints := first.Cols[0].(*Vec[int64])
	b.Recycle(first)
	b.Append(Insert, Row{int64(3), nil})
	second := b.Append(Insert, Row{int64(4), "d"})
	if second == nil || second.Capacity() != 2 {
		t.Fatalf("second chunk %v", second)
	}
	if got := second.Cols[0].(*Vec[int64]); &got.Vals[0] != &ints.Vals[0] {
		t.Error("the recycled chunk's vector was not reused")
	}
	if r := second.Row(0); r[0] != int64(3) || r[1] != nil {
		t.Errorf("row 0 = %v, want [3 NULL]", r)
	}
	if r := second.Row(1); r[0] != int64(4) || r[1] != "d" {
		t.Errorf("row 1 = %v, want [4 d]", r)
	}

	b.Append(Insert, Row{int64(5), "e"}) // the builder holds a row now
	b.Recycle(second)
	if second.Capacity() != 2 {
		t.Error("Recycle emptied a chunk while the builder held rows")
	}
	other := NewBuilder([]Type{TVarchar, TInt64}, 1).Append(Insert, Row{"x", int64(1)})
	b2 := NewBuilder(ts, 2)
	b2.Recycle(other)
	if other.Capacity() != 1 {
		t.Error("Recycle emptied a chunk of other column types")
	}
}

// TestBuilderUnreadColumns: columns marked unread come out NULL in every
// chunk, whichever way rows were appended, and the others keep their
// values.
func TestBuilderUnreadColumns(t *testing.T) {
	ts := []Type{TInt64, TVarchar, TInt64}
	b := NewBuilder(ts, 2)
	if err := b.Unread([]bool{false, true, false}); err != nil {
		t.Fatal(err)
	}
	if err := b.Unread([]bool{true}); err == nil {
		t.Fatal("a mask of the wrong length was accepted")
	}
	if b.Append(Insert, Row{int64(1), "a", int64(10)}) != nil {
		t.Fatal("a chunk after one row of two")
	}
	c := b.Append(Delete, Row{int64(2), "b", nil})
	b.AppendFrom(Insert, c, 0)
	for k, c := range []*Chunk{c, b.Take()} {
		for i := range c.Cardinality() {
			if got := c.Cols[1].Get(i); got != nil {
				t.Errorf("chunk %d row %d: unread column holds %v", k, i, got)
			}
			if c.Cols[0].Get(i) == nil || c.Cols[1].Len() != c.Cardinality() {
				t.Errorf("chunk %d row %d: read column lost its value, or lengths differ", k, i)
			}
		}
	}
	if got := c.Cols[2].Get(0); got != int64(10) {
		t.Errorf("read column: %v, want 10", got)
	}
}
