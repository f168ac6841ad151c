package agg

import (
	"context"
	"math"

	"github.com/sluice-db/sluice/internal/types"
)

// Groups keyed by one or two int64-backed columns (bigint and the smaller
// integers, timestamp, timestamptz: Nexmark q5's window start and
// auction) find their dirty groups by the key values themselves, in a map
// keyed by [2]int64, rather than by the key's encoding in a string-keyed
// one. A windowed aggregation creates most of its groups fresh each epoch
// (150 000 per actor in q5), and for such a map that is three to four
// times faster: no key bytes to encode, allocate and hash, and no string
// to follow for each comparison. A key with a NULL takes the string path;
// a key always takes the same path, so each group is in one index. The
// LRU of clean groups stays string-keyed: a group's string key is made
// only if it is cached or must be deleted from the cache.

// intKeyTypes reports whether the group keys are one or two types whose
// columns hold int64 values.
func intKeyTypes(ts []types.Type) bool {
	if len(ts) == 0 || len(ts) > 2 {
		return false
	}
	for _, t := range ts {
		if _, _, ok := int64Column(types.MustColumn(t, 0)); !ok {
			return false
		}
	}
	return true
}

// int64Column returns an int64-backed column's values and NULL bits.
func int64Column(col types.Column) ([]int64, types.Bitmap, bool) {
	switch v := col.(type) {
	case *types.Vec[int64]:
		return v.Vals, v.Nulls, true
	case *types.Vec[types.DTimestamp]:
		return asInt64s(v.Vals), v.Nulls, true
	case *types.Vec[types.DTimestamptz]:
		return asInt64s(v.Vals), v.Nulls, true
	}
	return nil, nil, false
}

// intCols is a chunk's group-key columns as int64 values, prepared once
// per chunk.
type intCols struct {
	ok    bool
	vals  [2][]int64
	nulls [2]types.Bitmap
	n     int
}

func (ic *intCols) prepare(cols []types.Column) {
	*ic = intCols{n: len(cols)}
	for j, c := range cols {
		vals, nulls, ok := int64Column(c)
		if !ok {
			return // not int-keyed: never set for such groups
		}
		ic.vals[j], ic.nulls[j] = vals, nulls
	}
	ic.ok = true
}

// release drops the chunk's columns, so as not to pin them.
func (ic *intCols) release() { *ic = intCols{} }

// at returns row i's key values, false when one is NULL.
func (ic *intCols) at(i int) ([2]int64, bool) {
	var k [2]int64
	for j := range ic.n {
		if ic.nulls[j].Get(i) {
			return k, false
		}
		k[j] = ic.vals[j][i]
	}
	return k, true
}

// intKeyOf returns a key row's values, false when one is NULL (or the
// groups are not int-keyed).
func (gs *groups) intKeyOf(key types.Row) ([2]int64, bool) {
	var k [2]int64
	if !gs.intKeyed {
		return k, false
	}
	for j, d := range key {
		switch v := d.(type) {
		case int64:
			k[j] = v
		case types.DTimestamp:
			k[j] = int64(v)
		case types.DTimestamptz:
			k[j] = int64(v)
		default:
			return k, false
		}
	}
	return k, true
}

// getInt is get for a group whose key values are ik: key, or when key is
// nil, row i of cols (boxed only if the group is not dirty).
func (gs *groups) getInt(ctx context.Context, ik [2]int64, key types.Row, cols []types.Column, i int) (*group, error) {
	if g := gs.epochInts[ik]; g != nil {
		return g, nil
	}
	if key == nil {
		key = gs.boxKey(cols, i)
	}
	var kb []byte
	if gs.cache.Len() > 0 {
		var err error
		if kb, err = gs.rowKey(key); err != nil {
			return nil, err
		}
		if g, ok := gs.cache.Get(string(kb)); ok {
			g.ik, g.intKey = ik, true
			gs.markDirty(g)
			return g, nil
		}
	}
	g, err := gs.load(ctx, kb, key)
	if err != nil {
		return nil, err
	}
	g.ik, g.intKey = ik, true
	gs.markDirty(g)
	return g, nil
}

// firstInt returns the value of g's first key, of int-keyed groups, or
// MaxInt64 when it is NULL, which no watermark passes (closesAtFlush).
func (gs *groups) firstInt(g *group) int64 {
	if g.intKey {
		return g.ik[0]
	}
	if k, ok := gs.intKeyOf(g.key[:1]); ok {
		return k[0]
	}
	return math.MaxInt64
}
