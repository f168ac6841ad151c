package storage

import (
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// TestItemLogMatchesSlice: items added across pages, and across resets
// that keep or drop pages, are found at the positions add returned, in
// write order; a reset keeps no more room than asked for.
func TestItemLogMatchesSlice(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var l itemLog
		var model []string
		for range rapid.IntRange(1, 8).Draw(rt, "rounds") {
			for range rapid.IntRange(0, 3*itemPage).Draw(rt, "adds") {
				k := strconv.Itoa(len(model))
				if i := l.add(overlayItem{key: k}); int(i) != len(model) {
					rt.Fatalf("add %d returned position %d", len(model), i)
				}
				model = append(model, k)
			}
			checkItemLog(rt, &l, model)
			keep := rapid.IntRange(0, 4*itemPage).Draw(rt, "keep")
			l.reset(keep)
			model = model[:0]
			if c := l.capacity(); c > keep {
				rt.Fatalf("reset(%d) kept room for %d items", keep, c)
			}
		}
	})
}

func checkItemLog(rt *rapid.T, l *itemLog, model []string) {
	if l.len() != len(model) {
		rt.Fatalf("len %d, want %d", l.len(), len(model))
	}
	for i, k := range model {
		if got := l.at(int32(i)).key; got != k {
			rt.Fatalf("at(%d) = %q, want %q", i, got, k)
		}
	}
	// The seal reads the pages in order, item p<<itemPageBits+j at
	// pages[p][j].
	n := 0
	for p, page := range l.pages {
		for j := range page {
			if i := p<<itemPageBits + j; i != n || page[j].key != model[n] {
				rt.Fatalf("pages: item %d at %d is %q, want %q", n, i, page[j].key, model[n])
			}
			n++
		}
	}
	if n != len(model) {
		rt.Fatalf("pages hold %d of %d items", n, len(model))
	}
}
