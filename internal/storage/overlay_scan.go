package storage

import (
	"strings"

	"github.com/RaduBerinde/btreemap"
)

// overlaySpan is the part of a key range an iterator still needs from the
// overlay: keys after lo (or from lo, when !after) and, when hasHi, below hi.
type overlaySpan struct {
	lo, hi string
	after  bool
	hasHi  bool
}

// bounds returns the span as a B-tree range.
func (sp overlaySpan) bounds() (btreemap.LowerBound[string], btreemap.UpperBound[string]) {
	lo := btreemap.GE(sp.lo)
	if sp.after {
		lo = btreemap.GT(sp.lo)
	}
	hi := btreemap.Max[string]()
	if sp.hasHi {
		hi = btreemap.LT(sp.hi)
	}
	return lo, hi
}

// fill appends to dst, in key order, up to about max of the newest
// uncommitted writes in span (tombstones included, each key once), and
// reports whether span holds no more. It reads the overlay's current
// state, so the owner may write or seal between calls; an iterator resumes
// after the last key it got.
func (o *overlay) fill(dst []overlayItem, sp overlaySpan, max int) ([]overlayItem, bool) {
	srcs := o.gather(sp, max)
	switch len(srcs) {
	case 0:
		return dst, true
	case 1:
		return append(dst, srcs[0]...), len(srcs[0]) < max
	}
	// A truncated source may hold keys beyond its last one that sort before
	// another source's later keys: stop the merge at the smallest such key.
	bound, bounded := "", false
	for _, s := range srcs {
		if len(s) == max && (!bounded || s[len(s)-1].key < bound) {
			bound, bounded = s[len(s)-1].key, true
		}
	}
	for {
		min := -1
		for i, s := range srcs {
			if len(s) > 0 && (min < 0 || s[0].key < srcs[min][0].key) {
				min = i // ties keep the earlier, newer source
			}
		}
		if min < 0 {
			break
		}
		it := srcs[min][0]
		if bounded && it.key > bound {
			break
		}
		dst = append(dst, it)
		for i, s := range srcs {
			if len(s) > 0 && s[0].key == it.key {
				srcs[i] = s[1:]
			}
		}
	}
	return dst, !bounded
}

// gather returns, newest layer first, each non-empty layer's first max
// items in span. The slices live in scratch buffers owned by the overlay
// and are valid until the next call.
func (o *overlay) gather(sp overlaySpan, max int) [][]overlayItem {
	srcs := o.srcScratch[:0]
	if o.items.len() > 0 {
		buf := o.pendScratch[:0]
		o.ascend(sp, func(i int32) bool {
			buf = append(buf, *o.items.at(i))
			return len(buf) < max
		})
		o.pendScratch = buf
		if len(buf) > 0 {
			srcs = append(srcs, buf)
		}
	}
	for r := len(o.runs) - 1; r >= 0; r-- {
		if s := o.runs[r].span(sp, max); len(s) > 0 {
			srcs = append(srcs, s)
		}
	}
	o.srcScratch = srcs
	return srcs
}

// span returns up to max of the run's items in sp, in r.scratch (valid
// until the next call).
func (r *sealedRun) span(sp overlaySpan, max int) []overlayItem {
	lo, hi := 0, r.len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := strings.Compare(r.item(m).key, sp.lo)
		if c < 0 || (c == 0 && sp.after) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	out := r.scratch[:0]
	for j := lo; j < r.len() && len(out) < max; j++ {
		it := r.item(j)
		if sp.hasHi && it.key >= sp.hi {
			break
		}
		out = append(out, *it)
	}
	r.scratch = out
	return out
}
