package storage

import (
	"cmp"
	"slices"
	"strings"
)

// statePrefixLen is the length of t|tableID, which every key of one state
// table shares.
const statePrefixLen = 5

// sortKey is an item's position with the sortWords*8 key bytes after the
// table prefix (the vnode and the PK) as big-endian integers. One word was
// not enough: a bigint's tag and high bytes filled it, so keys of one
// vnode tied on it and most comparisons read both keys (cache misses: a
// third of a GROUP BY's value-table seal); three hold a vnode and two
// bigints, a value table's whole key.
type sortKey struct {
	w   [sortWords]uint64
	pos int32
}

const sortWords = 3

// newSortKey is the sort key of the item at pos.
func newSortKey(key string, pos int) sortKey {
	k := sortKey{pos: int32(pos)}
	for i := range k.w {
		k.w[i] = keyWord(key, statePrefixLen+8*i)
	}
	return k
}

// sortedKeys returns the sort keys of the unsealed items the run keeps
// (sealsItem) in key order (in o.sortKeys). Sorting the items directly
// spent most of its time comparing the prefix every key shares and moving
// 40-byte items; here most comparisons are of one integer, and no item
// moves.
func (o *overlay) sortedKeys() []sortKey {
	items := &o.items
	keys := o.sortKeys[:0]
	if n := items.len(); cap(keys) < n {
		keys = make([]sortKey, 0, n) // not grown by append
	}
	anyFresh := o.fresh.Any()
	for p, page := range items.pages {
		for j := range page {
			pos := p<<itemPageBits + j
			if anyFresh && !o.sealsItem(int32(pos)) {
				continue
			}
			keys = append(keys, newSortKey(page[j].key, pos))
		}
	}
	keys = sortKeys(keys, func(i int32) string { return items.at(i).key }, &o.sortTmp)
	o.sortKeys = keys
	return keys
}

// keyWord reads key[from:][:8] as a big-endian integer, padded with
// zeros. If a's word is less than b's (and the bytes before are equal),
// a < b; equal words say nothing.
func keyWord(key string, from int) uint64 {
	if len(key) >= from+8 {
		k := key[from : from+8]
		return uint64(k[0])<<56 | uint64(k[1])<<48 | uint64(k[2])<<40 | uint64(k[3])<<32 |
			uint64(k[4])<<24 | uint64(k[5])<<16 | uint64(k[6])<<8 | uint64(k[7])
	}
	var h uint64
	for i := range 8 {
		h <<= 8
		if j := from + i; j < len(key) {
			h |= uint64(key[j])
		}
	}
	return h
}

// radixFrom is the number of items from which sortKeys sorts by radix.
const radixFrom = 512

// sortKeys sorts keys by their items' keys: by radix on the words for
// many items (pdqsort's comparisons were most of a value table's seal),
// then by comparison within runs of equal words. tmp is scratch of the
// same size, kept between calls; the result is keys or *tmp.
func sortKeys(keys []sortKey, keyAt func(int32) string, tmp *[]sortKey) []sortKey {
	full := func(a, b sortKey) int {
		for i := range a.w {
			if c := cmp.Compare(a.w[i], b.w[i]); c != 0 {
				return c
			}
		}
		return strings.Compare(keyAt(a.pos), keyAt(b.pos))
	}
	if len(keys) < radixFrom {
		slices.SortFunc(keys, full)
		return keys
	}
	if cap(*tmp) < len(keys) {
		*tmp = make([]sortKey, len(keys))
	}
	other := (*tmp)[:len(keys)]
	if sorted := radixSort(keys, other); &sorted[0] == &other[0] {
		keys, *tmp = other, keys[:0]
	} else {
		*tmp = other[:0]
	}
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi].w == keys[lo].w {
			hi++
		}
		if hi-lo > 1 {
			slices.SortStableFunc(keys[lo:hi], full)
		}
		lo = hi
	}
	return keys
}

// radixSort sorts keys by their words, stably, least significant byte
// first, skipping bytes every key shares; the result is keys or tmp.
func radixSort(keys, tmp []sortKey) []sortKey {
	var counts [8 * sortWords][256]int
	for _, k := range keys {
		for d := range 8 * sortWords {
			counts[d][digit(k, d)]++
		}
	}
	for d := range 8 * sortWords {
		c := &counts[d]
		if c[digit(keys[0], d)] == len(keys) {
			continue // every key has this byte
		}
		sum := 0
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		for _, k := range keys {
			b := digit(k, d)
			tmp[c[b]] = k
			c[b]++
		}
		keys, tmp = tmp, keys
	}
	return keys
}

// digit is byte d of the words, 0 the least significant.
func digit(k sortKey, d int) byte {
	return byte(k.w[sortWords-1-d/8] >> (8 * (d % 8)))
}
