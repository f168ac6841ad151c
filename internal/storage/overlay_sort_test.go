package storage

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestSortKeysOrdersByKey: the radix sort (with comparison inside runs of
// equal words) orders items exactly as comparing whole keys does, for
// keys sharing long prefixes, keys shorter than the words, and sizes on
// both sides of radixFrom.
func TestSortKeysOrdersByKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, radixFrom).Draw(t, "n")
		if rapid.Bool().Draw(t, "radix") {
			n += radixFrom
		}
		alphabet := []byte{0, 1, 2, 0x7f, 0x80, 0xff}
		// Some byte positions vary, others are shared: the radix sort
		// skips those, so its passes are sometimes odd, sometimes even.
		varies := rapid.SliceOfN(rapid.Bool(), 32, 32).Draw(t, "varies")
		fixed := rapid.IntRange(-1, 32).Draw(t, "fixed length") // -1: lengths vary
		seen := map[string]bool{}
		var items []overlayItem
		for range n {
			l := fixed
			if l < 0 {
				l = rapid.IntRange(0, 32).Draw(t, "len")
			}
			b := []byte("t\x00\x00\x00\x07")
			for j := range l {
				c := alphabet[1]
				if varies[j] {
					c = alphabet[rapid.IntRange(0, len(alphabet)-1).Draw(t, "byte")]
				}
				b = append(b, c)
			}
			if k := string(b); !seen[k] { // overlay keys are distinct
				seen[k] = true
				items = append(items, overlayItem{key: k})
			}
		}
		var keys []sortKey
		for i, it := range items {
			keys = append(keys, newSortKey(it.key, i))
		}
		var tmp []sortKey
		got := sortKeys(keys, func(i int32) string { return items[i].key }, &tmp)
		want := slices.Clone(items)
		slices.SortFunc(want, func(a, b overlayItem) int { return strings.Compare(a.key, b.key) })
		for i := range got {
			if items[got[i].pos].key != want[i].key {
				t.Fatalf("position %d: %q, want %q", i, items[got[i].pos].key, want[i].key)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d keys out, %d in", len(got), len(want))
		}
	})
}

// TestGrown: grown keeps the elements and makes room for n more, reusing
// the slice when it has the room already.
func TestGrown(t *testing.T) {
	s := append(make([]uint32, 0, 4), 1, 2, 3)
	if g := grown(s, 1); &g[0] != &s[0] || len(g) != 3 {
		t.Fatalf("grown with room made a new slice (len %d)", len(g))
	}
	g := grown(s, 100)
	if len(g) != 3 || cap(g) < 103 || g[0] != 1 || g[2] != 3 {
		t.Fatalf("grown(s, 100) = %v, cap %d", g, cap(g))
	}
	if g = append(g, make([]uint32, 100)...); g[102] != 0 || &g[0] != &grown(g[:3], 100)[0] {
		t.Fatal("the room is not zero or not reused")
	}
}
