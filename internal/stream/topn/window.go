package topn

import (
	"context"
	"math"
)

// bound is a sort key or +∞.
type bound struct {
	key string
	inf bool
}

func keyBound(k string) bound { return bound{key: k} }

var infBound = bound{inf: true}

func (a bound) less(b bound) bool {
	switch {
	case a.inf:
		return false
	case b.inf:
		return true
	}
	return a.key < b.key
}

func minBound(a, b bound) bound {
	if b.less(a) {
		return b
	}
	return a
}

func maxBound(a, b bound) bound {
	if a.less(b) {
		return b
	}
	return a
}

// window is the set of a group's rows that are in the output: those whose
// sort key k has lo ≤ k ≤ hi. Because rows are identified by their sort
// keys and the keys of rows that did not change do not move, two windows of
// the same group can be compared by their bounds alone. lo = +∞ is the empty
// window; hi = +∞ is a window without limit.
type window struct {
	lo, hi bound
}

var emptyWindow = window{lo: infBound, hi: infBound}

func (w window) empty() bool { return w.lo.inf }

func (w window) contains(key string) bool {
	if w.lo.inf || key < w.lo.key {
		return false
	}
	return w.hi.inf || key <= w.hi.key
}

// spec is the node's ranking: rows Offset+1 … Offset+Limit, ties extended
// when WithTies.
type spec struct {
	offset   int
	limit    int // < 0: no limit
	withTies bool
	rank     bool // output each row's rank (rank.go)
	// appendOnly: the input only inserts and the limit is positive, so rows
	// ranked after the window are never stored (appendonly.go).
	appendOnly bool
}

// newSpec clamps the plan's int64s to int; a limit or offset beyond what
// memory can hold behaves as "everything".
func newSpec(offset, limit int64, withTies bool) spec {
	clamp := func(v int64) int {
		if v > math.MaxInt32 {
			return math.MaxInt32
		}
		return int(v)
	}
	s := spec{offset: clamp(offset), limit: -1, withTies: withTies}
	if limit >= 0 {
		s.limit = clamp(limit)
	}
	return s
}

// end is the rank after the last row of the window, before ties.
func (s spec) end() int { return s.offset + s.limit }

// windowOf computes the group's current window, first making the cache
// reach the ranks it needs (offset, the last row of the window, and for
// WITH TIES the peers after it).
func (s spec) windowOf(ctx context.Context, c *groupCache) (window, error) {
	if s.limit == 0 {
		return emptyWindow, nil
	}
	if err := c.ensureRank(ctx, s.offset+1); err != nil {
		return window{}, err
	}
	if len(c.rows) <= s.offset {
		return emptyWindow, nil
	}
	lo := keyBound(c.rows[s.offset].key)
	if s.limit < 0 {
		return window{lo: lo, hi: infBound}, nil
	}
	if err := c.ensureRank(ctx, s.end()); err != nil {
		return window{}, err
	}
	last := min(s.end(), len(c.rows)) - 1
	for s.withTies {
		if err := c.ensureRank(ctx, last+2); err != nil {
			return window{}, err
		}
		if last+1 >= len(c.rows) || !peers(c.rows[last], c.rows[last+1]) {
			break
		}
		last++
	}
	return window{lo: lo, hi: keyBound(c.rows[last].key)}, nil
}
