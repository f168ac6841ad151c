package storage

import "hash/maphash"

// keyIndex maps an overlay's unsealed keys to their positions in its
// items, by a 64-bit hash of each key. A map keyed by the key strings
// spent most of a bulk epoch's map time growing: every rehash hashed each
// key again, reading its bytes from wherever they lay (a cache miss per
// key; 0.57 s of a million-row GROUP BY load). Hashes are kept in the
// map, so growing moves integers. A key whose hash another key already
// holds (as good as never, but possible) goes to collide by its string.
// Items are never removed within an epoch (a delete is a tombstone item),
// so a hash stays with its first key until reset.
type keyIndex struct {
	seed    maphash.Seed
	byHash  map[uint64]int32
	collide map[string]int32
}

// weakKeyHash makes every key hash to one of a few values: tests set it to
// drive the collision path.
var weakKeyHash = false

func hashKey(seed maphash.Seed, key []byte) uint64 {
	if weakKeyHash {
		return uint64(len(key) % 3)
	}
	return maphash.Bytes(seed, key)
}

func hashKeyString(seed maphash.Seed, key string) uint64 {
	if weakKeyHash {
		return uint64(len(key) % 3)
	}
	return maphash.String(seed, key)
}

func newKeyIndex(n int) keyIndex {
	return keyIndex{seed: maphash.MakeSeed(), byHash: make(map[uint64]int32, n)}
}

// find returns key's position in items.
func (x *keyIndex) find(items []overlayItem, key []byte) (int32, bool) {
	i, ok := x.byHash[hashKey(x.seed, key)]
	if !ok || items[i].key == string(key) {
		return i, ok
	}
	i, ok = x.collide[string(key)]
	return i, ok
}

// insert records that key, absent so far, is at position i.
func (x *keyIndex) insert(key string, i int32) {
	h := hashKeyString(x.seed, key)
	if _, taken := x.byHash[h]; !taken {
		x.byHash[h] = i
		return
	}
	if x.collide == nil {
		x.collide = map[string]int32{}
	}
	x.collide[key] = i
}

// reset forgets every key, keeping the map's room unless n says to size
// it anew.
func (x *keyIndex) reset(n int, resize bool) {
	if resize {
		x.byHash = make(map[uint64]int32, n)
	} else {
		clear(x.byHash)
	}
	x.collide = nil
}
