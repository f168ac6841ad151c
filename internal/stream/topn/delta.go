package topn

import (
	"bytes"
	"context"
	"slices"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// groupChunk is one group's bookkeeping while one input chunk is applied:
// the window before the chunk, and for every row key the chunk touched,
// whether that row was in the window before and what the chunk left.
type groupChunk struct {
	prefix  types.Row // group key datums, the table scan prefix
	cache   *groupCache
	before  window
	changed map[string]*change
	// ranked is the window's rows before the chunk, with plan.TopN.Rank.
	ranked []entry
}

type change struct {
	wasIn  bool
	oldRow types.Row
	// present and row are the key's state after the chunk's last op on it,
	// which is exactly what the table holds for it (Insert puts, Delete
	// removes), so no lookup is needed afterwards.
	present bool
	row     types.Row
}

// note records an op on e before it is applied to the cache.
func (g *groupChunk) note(e entry, insert bool) {
	ch, ok := g.changed[e.key]
	if !ok {
		ch = &change{}
		ch.wasIn, ch.oldRow = g.wasIn(e, insert)
		g.changed[e.key] = ch
	}
	ch.present = insert
	ch.row = e.row
}

// wasIn tells whether the row with e's key was in the window before the
// chunk, and its content then. Within the cached prefix the cache knows;
// beyond it (only possible without a limit, where the window has no end)
// the op itself tells: a delete removes a row that was there, an insert
// adds one that was not.
func (g *groupChunk) wasIn(e entry, insert bool) (bool, types.Row) {
	if !g.before.contains(e.key) {
		return false, nil
	}
	if !g.before.hi.inf || g.cache.covers(e.key) {
		// The cache reached before.hi when the chunk began, and no earlier
		// op of this chunk touched this key, so the cache still holds the
		// key's state from before the chunk (even if a delete has since
		// shortened the prefix).
		old, ok := g.cache.get(e.key)
		return ok, old.row
	}
	if insert {
		return false, nil
	}
	return true, e.row
}

// outRow is one output row with the sort key that orders it.
type outRow struct {
	key string
	op  types.Op
	row types.Row
}

// diff appends to dels and ins the output changes that turn the window
// before the chunk into after. A row's membership can change only if the
// chunk touched it, or if it lies between a moved bound's old and new
// position; so only those rows are visited, never the whole window.
func (g *groupChunk) diff(ctx context.Context, after window, schema []types.Type, dels, ins []outRow) ([]outRow, []outRow, error) {
	nd, ni := len(dels), len(ins)
	for key, ch := range g.changed {
		isIn := ch.present && after.contains(key)
		switch {
		case ch.wasIn && isIn:
			if !sameRow(ch.oldRow, ch.row, schema) {
				dels = append(dels, outRow{key, types.UpdateDelete, ch.oldRow}, outRow{key, types.UpdateInsert, ch.row})
			}
		case ch.wasIn:
			dels = append(dels, outRow{key, types.Delete, ch.oldRow})
		case isIn:
			ins = append(ins, outRow{key, types.Insert, ch.row})
		}
	}
	for _, r := range flipRanges(g.before, after) {
		if err := g.cache.ensureKey(ctx, r.to); err != nil {
			return nil, nil, err
		}
		i, _ := g.cache.search(r.from.key)
		for ; i < len(g.cache.rows) && !r.to.less(keyBound(g.cache.rows[i].key)); i++ {
			e := g.cache.rows[i]
			if _, ok := g.changed[e.key]; ok {
				continue
			}
			was, is := g.before.contains(e.key), after.contains(e.key)
			switch {
			case was && !is:
				dels = append(dels, outRow{e.key, types.Delete, e.row})
			case is && !was:
				ins = append(ins, outRow{e.key, types.Insert, e.row})
			}
		}
	}
	// Map iteration is random; sort (stably, keeping U-/U+ pairs) so that
	// output is deterministic, in rank order within the group.
	byKey := func(a, b outRow) int { return cmpString(a.key, b.key) }
	slices.SortStableFunc(dels[nd:], byKey)
	slices.SortStableFunc(ins[ni:], byKey)
	return dels, ins, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// keyRange is the inclusive range of sort keys from..to; from is finite.
type keyRange struct{ from, to bound }

// flipRanges returns key ranges that contain every row (present both before
// and after) whose membership differs between windows a and b. For two
// non-empty windows [lo0, hi0] and [lo1, hi1] that is the span between the
// two lows and the span between the two highs; when one is empty it is the
// other one whole (which then holds no more rows than the chunk changed,
// because the group had at most Offset rows on the empty side).
func flipRanges(a, b window) []keyRange {
	switch {
	case a.empty() && b.empty():
		return nil
	case a.empty():
		return []keyRange{{b.lo, b.hi}}
	case b.empty():
		return []keyRange{{a.lo, a.hi}}
	}
	var out []keyRange
	if a.lo != b.lo {
		out = append(out, keyRange{minBound(a.lo, b.lo), maxBound(a.lo, b.lo)})
	}
	if a.hi != b.hi {
		hi := keyRange{minBound(a.hi, b.hi), maxBound(a.hi, b.hi)}
		// The low span starts no later than the high one (lo ≤ hi in both
		// windows); when they overlap, visit the union once so no row is
		// emitted twice.
		if n := len(out); n > 0 && !out[0].to.less(hi.from) {
			out[0].to = maxBound(out[0].to, hi.to)
			return out
		}
		out = append(out, hi)
	}
	return out
}

// sameRow reports whether two rows are identical to the byte, so that an
// update of a column outside the key (or 1.0 → 1.00) is still emitted.
func sameRow(a, b types.Row, schema []types.Type) bool {
	ea, err1 := codec.EncodeValue(nil, a, schema)
	eb, err2 := codec.EncodeValue(nil, b, schema)
	return err1 == nil && err2 == nil && bytes.Equal(ea, eb)
}
