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
