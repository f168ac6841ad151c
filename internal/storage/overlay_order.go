package storage

import (
	"math/bits"
	"sort"
	"strings"

	"github.com/RaduBerinde/btreemap"
)

// keyOrder is the unsealed writes' key order, which scans need and point
// reads do not. Most scanned tables are scanned rarely: a join side loads
// a key its cache lacks a few times a run, between hundreds of thousands
// of inserts. A tree kept up to date by every write cost Nexmark q7 16 % of
// its CPU for eleven scans. So the order is kept lazily, as sorted item
// positions that cover the items up to covered; a scan sorts the items
// written since and merges them in. Only when scans come so often that
// the merges would cost more than tree inserts (fewer than mergeRatio
// writes per covered item since the last merge) does the epoch switch to
// the tree, which each write then updates.
type keyOrder struct {
	sorted  []int32 // positions in items, in key order, of items [0, covered)
	covered int
	spare   []int32 // the previous merge's buffer
	fresh   []int32 // scratch: the new positions being merged
	// tree, when non-nil, orders every unsealed item and is kept up to
	// date by each write.
	tree    *btreemap.BTreeMap[string, int32]
	scanned bool // a scan read the order since the last seal
	// filtered counts the items bounded scans have read without sorting
	// since the order last grew (see ascendFiltered); picks is their
	// scratch.
	filtered int
	picks    []int32
}

// mergeRatio: a merge of m new items into n moves n positions; a tree
// insert costs about as much as moving a few hundred. Below n/mergeRatio
// new items, the tree is cheaper. A variable for the model test, which
// drives both ways with a small one.
var mergeRatio = 256

// noteWrite records the new unsealed item i (key k) in the tree, if the
// epoch keeps one; otherwise the next scan merges it.
func (o *overlay) noteWrite(k string, i int32) {
	if o.order.tree != nil {
		o.order.tree.ReplaceOrInsert(k, i)
	}
}

// ascend yields, in key order, the positions of the unsealed items in sp
// until yield returns false.
func (o *overlay) ascend(sp overlaySpan, yield func(int32) bool) {
	if o.filterCheaper(sp) {
		o.ascendFiltered(sp, yield)
		return
	}
	o.ensureOrder()
	if t := o.order.tree; t != nil {
		lo, hi := sp.bounds()
		for _, i := range t.Ascend(lo, hi) {
			if !yield(i) {
				return
			}
		}
		return
	}
	s := o.order.sorted
	for j := sp.searchIn(o, s); j < len(s); j++ {
		if sp.hasHi && o.items.at(s[j]).key >= sp.hi {
			return
		}
		if !yield(s[j]) {
			return
		}
	}
}

// A bounded scan (a join side loading one key) needs only the few items
// in its range. Sorting every item written since the order last grew, for
// the first scan after them, cost Nexmark q7 a tenth of its CPU: a handful
// of loads per epoch (a window's new maximum price) each sorted the tens of
// thousands of bids stored since. So a bounded scan first picks the items
// in its range from those not yet ordered, in one pass, and sorts only
// the picks. Passes are cheaper than the sort only while they are few:
// once the items they read reach what sorting would cost (m log m for m
// items), the scan sorts as before, and later scans merge.

// filterCheaper reports whether a bounded scan of sp should pick its
// items from the unordered ones rather than sort them.
func (o *overlay) filterCheaper(sp overlaySpan) bool {
	ko := &o.order
	m := o.items.len() - ko.covered
	if !sp.hasHi || ko.tree != nil || m < filterFrom {
		return false
	}
	return ko.filtered+m <= m*bits.Len(uint(m))
}

// filterFrom is the fewest unordered items worth a pass instead of a sort.
var filterFrom = 64

// ascendFiltered is ascend over the ordered items and, picked in one pass
// and sorted, the unordered items in sp.
func (o *overlay) ascendFiltered(sp overlaySpan, yield func(int32) bool) {
	ko := &o.order
	ko.scanned = true
	n := o.items.len()
	ko.filtered += n - ko.covered
	picks := ko.picks[:0]
	for i := ko.covered; i < n; i++ {
		if sp.holds(o.items.at(int32(i)).key) {
			picks = append(picks, int32(i))
		}
	}
	o.sortPositions(picks)
	ko.picks = picks
	s := ko.sorted[sp.searchIn(o, ko.sorted):]
	for len(s) > 0 || len(picks) > 0 {
		var next int32
		switch {
		case len(s) > 0 && !sp.holds(o.items.at(s[0]).key):
			s = nil
			continue
		case len(picks) == 0 || (len(s) > 0 && o.compareItems(s[0], picks[0]) < 0):
			next, s = s[0], s[1:]
		default:
			next, picks = picks[0], picks[1:]
		}
		if !yield(next) {
			return
		}
	}
}

// holds reports whether key is in the span.
func (sp overlaySpan) holds(key string) bool {
	c := strings.Compare(key, sp.lo)
	if c < 0 || (c == 0 && sp.after) {
		return false
	}
	return !sp.hasHi || key < sp.hi
}

// searchIn returns the index in s (positions in key order) of the first
// item at or after the span's start.
func (sp overlaySpan) searchIn(o *overlay, s []int32) int {
	return sort.Search(len(s), func(j int) bool {
		c := strings.Compare(o.items.at(s[j]).key, sp.lo)
		return c > 0 || (c == 0 && !sp.after)
	})
}

// ensureOrder brings the order up to the items written so far.
func (o *overlay) ensureOrder() {
	ko := &o.order
	ko.scanned = true
	ko.filtered = 0
	n := o.items.len()
	if ko.tree != nil || ko.covered == n {
		return
	}
	fresh := o.sortedRange(ko.fresh[:0], ko.covered, n)
	ko.fresh = fresh
	if ko.covered > 0 && len(fresh)*mergeRatio < ko.covered {
		o.buildTree()
		return
	}
	merged := ko.spare[:0]
	if len(fresh)*8 > ko.covered {
		merged = o.mergeLinear(merged, ko.sorted, fresh)
	} else {
		merged = o.mergeSearch(merged, ko.sorted, fresh)
	}
	ko.spare, ko.sorted, ko.covered = ko.sorted, merged, n
}

// sortedRange appends to dst the positions of items [from, n) in key
// order.
func (o *overlay) sortedRange(dst []int32, from, n int) []int32 {
	start := len(dst)
	for i := from; i < n; i++ {
		dst = append(dst, int32(i))
	}
	o.sortPositions(dst[start:])
	return dst
}

// sortPositions sorts pos, positions of unsealed items, by their keys. It
// sorts as the seal does (sortKeys), by the keys' leading words: comparing
// the items' keys themselves read two items at random per comparison
// (most of a q5 join side's scans, which sorted an epoch's tens of
// thousands of writes). Like the seal, it relies on every key of the
// overlay starting with its table's prefix (statePrefixLen): the words
// are read after it.
func (o *overlay) sortPositions(pos []int32) {
	keys := o.sortKeys[:0]
	if cap(keys) < len(pos) {
		keys = make([]sortKey, 0, len(pos))
	}
	for _, p := range pos {
		keys = append(keys, newSortKey(o.items.at(p).key, int(p)))
	}
	keys = sortKeys(keys, func(i int32) string { return o.items.at(i).key }, &o.sortTmp)
	o.sortKeys = keys
	for i, k := range keys {
		pos[i] = k.pos
	}
}

func (o *overlay) compareItems(a, b int32) int {
	return strings.Compare(o.items.at(a).key, o.items.at(b).key)
}

// mergeLinear merges two sorted position lists by walking both.
func (o *overlay) mergeLinear(dst, a, b []int32) []int32 {
	for len(a) > 0 && len(b) > 0 {
		if o.compareItems(b[0], a[0]) < 0 {
			dst, b = append(dst, b[0]), b[1:]
		} else {
			dst, a = append(dst, a[0]), a[1:]
		}
	}
	return append(append(dst, a...), b...)
}

// mergeSearch merges a few positions b into many a: each b finds its place
// by binary search, and the runs of a between are copied whole.
func (o *overlay) mergeSearch(dst, a, b []int32) []int32 {
	for _, p := range b {
		k := o.items.at(p).key
		j := sort.Search(len(a), func(j int) bool { return o.items.at(a[j]).key > k })
		dst = append(append(dst, a[:j]...), p)
		a = a[j:]
	}
	return append(dst, a...)
}

// buildTree switches the epoch to the tree: scans come too often for
// merges. It inserts the items in key order.
func (o *overlay) buildTree() {
	ko := &o.order
	ko.tree = btreemap.New[string, int32](16, compareStrings)
	all := o.mergeLinear(ko.spare[:0], ko.sorted, ko.fresh)
	for _, i := range all {
		ko.tree.ReplaceOrInsert(o.items.at(i).key, i)
	}
	ko.spare, ko.sorted, ko.covered = all[:0], ko.sorted[:0], 0
}

// resetOrder forgets the order at the seal of n items. The tree is kept
// (emptied) for the next epoch only if this one used it; merges start
// over, in buffers kept unless a huge epoch grew them (oversized).
func (o *overlay) resetOrder(n int) {
	ko := &o.order
	if ko.tree != nil {
		if ko.scanned {
			ko.tree.Clear(true)
		} else {
			ko.tree = nil
		}
	}
	for _, b := range []*[]int32{&ko.sorted, &ko.spare, &ko.fresh} {
		if oversized(cap(*b), n) {
			*b = nil
		}
		*b = (*b)[:0]
	}
	ko.covered, ko.scanned, ko.filtered = 0, false, 0
	if oversized(cap(ko.picks), n) {
		ko.picks = nil
	}
}
