package topn

import (
	"context"
	"slices"
	"sort"
)

// loadFunc reads up to want rows of one group from the state table, in
// rank order, and reports whether it reached the end of the group.
type loadFunc func(ctx context.Context, want int) (rows []entry, all bool, err error)

// groupCache holds a prefix of one group's rows in rank order: rows[i] is
// exactly the row of rank i of the group as the state table holds it now
// (including this epoch's unsealed writes). Rows beyond the prefix live only
// in the table. complete says the prefix is the whole group.
//
// The prefix covers the low part (ranks below Offset), the middle (the
// window) and a bounded high part (a few rows beyond the window), so a
// delete inside the window can usually pull its successor in from memory;
// when the high part runs dry, ensureRank refills from the table.
type groupCache struct {
	load     loadFunc
	rows     []entry
	complete bool
}

// covers reports whether key falls inside the cached prefix, so that the
// cache must reflect a write to it.
func (c *groupCache) covers(key string) bool {
	if c.complete {
		return true
	}
	return len(c.rows) > 0 && key <= c.rows[len(c.rows)-1].key
}

// search returns the index of key, or where it would be inserted.
func (c *groupCache) search(key string) (int, bool) {
	i := sort.Search(len(c.rows), func(i int) bool { return c.rows[i].key >= key })
	return i, i < len(c.rows) && c.rows[i].key == key
}

// get returns the cached row with key; only meaningful when covers(key).
func (c *groupCache) get(key string) (entry, bool) {
	i, ok := c.search(key)
	if !ok {
		return entry{}, false
	}
	return c.rows[i], true
}

// insert records a row written to the table. A row beyond the prefix is not
// cached: the prefix stays exact because every row it lacks ranks after it.
func (c *groupCache) insert(e entry) {
	if !c.covers(e.key) {
		return
	}
	i, ok := c.search(e.key)
	if ok {
		c.rows[i] = e // an insert over a live key overwrites it, as the table does
		return
	}
	c.rows = slices.Insert(c.rows, i, e)
}

// remove records a row deleted from the table.
func (c *groupCache) remove(key string) {
	if !c.covers(key) {
		return
	}
	if i, ok := c.search(key); ok {
		c.rows = slices.Delete(c.rows, i, i+1) // clears the freed slot
	}
}

// ensureRank makes the prefix hold at least n rows, or the whole group.
// Each refill rescans the group from its start (the table offers prefix
// scans only) and asks for at least twice as many rows as before, so a run
// of refills costs O(final size) rows read.
func (c *groupCache) ensureRank(ctx context.Context, n int) error {
	for !c.complete && len(c.rows) < n {
		if err := c.refill(ctx, max(n, 2*len(c.rows))); err != nil {
			return err
		}
	}
	return nil
}

// ensureKey makes the prefix reach key (or the whole group); infinite asks
// for the whole group.
func (c *groupCache) ensureKey(ctx context.Context, b bound) error {
	for !c.complete && (len(c.rows) == 0 || b.inf || c.rows[len(c.rows)-1].key < b.key) {
		if err := c.refill(ctx, max(8, 2*len(c.rows))); err != nil {
			return err
		}
	}
	return nil
}

func (c *groupCache) refill(ctx context.Context, want int) error {
	rows, all, err := c.load(ctx, want)
	if err != nil {
		return err
	}
	c.rows, c.complete = rows, all
	return nil
}

// trim drops rows beyond the first keep, bounding the memory of a group.
func (c *groupCache) trim(keep int) {
	if len(c.rows) <= keep {
		return
	}
	clear(c.rows[keep:]) // let the dropped rows be collected
	c.rows = c.rows[:keep]
	c.complete = false
}
