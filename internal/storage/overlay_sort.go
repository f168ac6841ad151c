package storage

import (
	"cmp"
	"slices"
	"strings"
)

// statePrefixLen is the length of t|tableID, which every key of one state
// table shares.
const statePrefixLen = 5

// sortKey is an item's position with the 8 key bytes after the table
// prefix (the vnode and the PK's start) as a big-endian integer.
type sortKey struct {
	head uint64
	pos  int32
}

// sortedItems returns o.items sorted by key, in a new slice; o.items keeps
// its old order, and o.spare is used up. Sorting the items directly spent most of its time
// comparing the prefix every key shares and moving 40-byte items; here
// most comparisons are of one integer, and each item moves once.
func (o *overlay) sortedItems() []overlayItem {
	items := o.items
	keys := o.sortKeys[:0]
	if cap(keys) < len(items) {
		keys = make([]sortKey, 0, len(items)) // not grown by append: see put
	}
	for i, it := range items {
		keys = append(keys, sortKey{head: keyHead(it.key), pos: int32(i)})
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if c := cmp.Compare(a.head, b.head); c != 0 {
			return c
		}
		return strings.Compare(items[a.pos].key, items[b.pos].key)
	})
	o.sortKeys = keys
	out := o.spare[:0] // a pruned run's storage, if it is large enough
	o.spare = nil
	if cap(out) < len(items) {
		out = make([]overlayItem, 0, len(items))
	}
	for _, k := range keys {
		out = append(out, items[k.pos])
	}
	return out
}

// keyHead reads key[statePrefixLen:][:8] as a big-endian integer, padded
// with zeros. If a's head is less than b's, a < b; equal heads say
// nothing.
func keyHead(key string) uint64 {
	var h uint64
	for i := range 8 {
		h <<= 8
		if j := statePrefixLen + i; j < len(key) {
			h |= uint64(key[j])
		}
	}
	return h
}
