package storage

import "hash/maphash"

// keyIndex maps an overlay's unsealed keys to their positions in its
// items, by a 64-bit hash of each key, in a flat open-addressing table of
// its own: each slot one word, the hash's high half (which also picks the
// slot) beside the item's position plus one (zero: an empty slot), probed
// linearly and kept at most half full.
//
// A bulk epoch puts a million keys into one table, so every lookup of a
// new key misses the CPU cache. A Go map (swiss table: directory, table,
// control word, then the slot; and the lookup again to insert) cost
// several misses per key, 0.37 CPU s of a million-row GROUP BY load; here
// a miss is one line, and the insert that follows finds it cached.
// Growing reads the position from the slot, never a key's bytes.
//
// Keys whose hashes share the high half (as good as never) are told
// apart by comparing the keys. Items are never removed within an epoch (a
// delete is a tombstone item), so no slot is ever emptied until reset.
//
// The seal hands the epoch's index to its sealed run, whose point lookups
// it answers until the commit: a binary search of a run of 200 000 keys
// was some 18 cache misses per lookup, and a join's every insert looks
// (0.32 of Nexmark q4's 7.6 CPU s). All of an overlay's indexes share its
// seed, so one hash of a key serves every layer (keyHash).
type keyIndex struct {
	slots []uint64
	n     int
}

// weakKeyHash makes every key hash to one of a few values: tests set it to
// drive the collision path.
var weakKeyHash = false

func hashKey(seed maphash.Seed, key []byte) uint64 {
	if weakKeyHash {
		return uint64(len(key)%3) << 32
	}
	return maphash.Bytes(seed, key)
}

// minIndexSlots is the smallest table: one that a few writes fill keeps
// growing through sizes too small to matter.
const minIndexSlots = 64

func newKeyIndex(n int) keyIndex {
	return keyIndex{slots: make([]uint64, indexSlotsFor(n))}
}

// indexSlotsFor returns a power of two at least twice n.
func indexSlotsFor(n int) int {
	s := minIndexSlots
	for s < 2*n {
		s *= 2
	}
	return s
}

// find returns the position in items of key, whose hash is h.
func (x *keyIndex) find(h uint64, items *itemLog, key []byte) (int32, bool) {
	tag, mask := h>>32, uint64(len(x.slots)-1)
	for p := tag & mask; ; p = (p + 1) & mask {
		s := x.slots[p]
		if s == 0 {
			return 0, false
		}
		if s>>32 == tag {
			if i := int32(uint32(s) - 1); items.at(i).key == string(key) {
				return i, true
			}
		}
	}
}

// insert records that the key whose hash is h, absent so far, is at
// position i.
func (x *keyIndex) insert(h uint64, i int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	x.place(h>>32<<32 | uint64(uint32(i)+1))
	x.n++
}

// place puts slot value s into the first empty slot from its home.
func (x *keyIndex) place(s uint64) {
	mask := uint64(len(x.slots) - 1)
	p := (s >> 32) & mask
	for x.slots[p] != 0 {
		p = (p + 1) & mask
	}
	x.slots[p] = s
}

// grow doubles the table.
func (x *keyIndex) grow() {
	old := x.slots
	x.slots = make([]uint64, 2*len(old))
	for _, s := range old {
		if s != 0 {
			x.place(s)
		}
	}
}

// reset forgets every key, keeping the table's room.
func (x *keyIndex) reset() {
	clear(x.slots)
	x.n = 0
}
