package storage

import (
	"hash/maphash"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// TestKeyIndexMatchesMap: keys inserted into the index, across growth and
// resets of either kind, are found at their positions, and keys never
// inserted are not found; with real hashes and with every key hashing to
// one of three values (so that nearly every probe meets other keys).
func TestKeyIndexMatchesMap(t *testing.T) {
	for _, weak := range []bool{false, true} {
		t.Run(map[bool]string{false: "hashes", true: "collisions"}[weak], func(t *testing.T) {
			weakKeyHash = weak
			defer func() { weakKeyHash = false }()
			rapid.Check(t, checkKeyIndex)
		})
	}
}

func checkKeyIndex(rt *rapid.T) {
	x := newKeyIndex(rapid.IntRange(0, 100).Draw(rt, "hint"))
	seed := maphash.MakeSeed()
	var items itemLog
	model := map[string]int32{}
	// Most steps draw a new key: enough of them to grow the table a few
	// times over.
	key := rapid.Custom(func(t *rapid.T) string {
		return strconv.Itoa(rapid.IntRange(0, 5000).Draw(t, "k"))
	})
	for range rapid.IntRange(1, 1000).Draw(rt, "steps") {
		switch rapid.IntRange(0, 99).Draw(rt, "op") {
		case 0:
			if rapid.Bool().Draw(rt, "resize") { // a new index, as nextIndex makes
				x = newKeyIndex(rapid.IntRange(0, 300).Draw(rt, "n"))
			} else {
				x.reset()
			}
			items.reset(0)
			model = map[string]int32{}
		default:
			k := key.Draw(rt, "key")
			h := hashKey(seed, []byte(k))
			i, ok := x.find(h, &items, []byte(k))
			want, wantOK := model[k]
			if ok != wantOK || (ok && i != want) {
				rt.Fatalf("find(%q) = %d, %v; want %d, %v", k, i, ok, want, wantOK)
			}
			if !ok {
				i := items.add(overlayItem{key: k})
				model[k] = i
				x.insert(h, i)
			}
		}
	}
	if 2*x.n > len(x.slots) {
		rt.Fatalf("%d keys in %d slots: more than half full", x.n, len(x.slots))
	}
}
