package storage

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
)

// overlayModel is the overlay's meaning: per uncommitted epoch a map of
// writes, plus the unsealed writes; the newest layer wins.
type overlayModel struct {
	runs    []modelRun
	pending map[string]types.Row // nil row = tombstone
	// fresh holds the unsealed keys written by putFreshH: keys no layer
	// (nor the committed state) held. One deleted again by its epoch's end
	// is in no run (dead), and may be written as fresh again.
	fresh, dead map[string]bool
	nFresh      int
}

// seal moves the unsealed writes to a run of epoch, leaving out the fresh
// keys deleted again.
func (m *overlayModel) seal(epoch uint64) {
	for k := range m.fresh {
		if m.pending[k] == nil {
			delete(m.pending, k)
			m.dead[k] = true
		}
	}
	m.runs = append(m.runs, modelRun{epoch: epoch, writes: m.pending})
	m.pending, m.fresh = map[string]types.Row{}, map[string]bool{}
}

type modelRun struct {
	epoch  uint64
	writes map[string]types.Row
}

func (m *overlayModel) get(k string) (types.Row, bool) {
	if r, ok := m.pending[k]; ok {
		return r, true
	}
	for i := len(m.runs) - 1; i >= 0; i-- {
		if r, ok := m.runs[i].writes[k]; ok {
			return r, true
		}
	}
	return nil, false
}

// span returns the newest write of every key in [lo, hi), in key order.
func (m *overlayModel) span(lo, hi string) []overlayItem {
	keys := map[string]bool{}
	for k := range m.pending {
		keys[k] = true
	}
	for _, r := range m.runs {
		for k := range r.writes {
			keys[k] = true
		}
	}
	var out []overlayItem
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if k >= lo && k < hi {
			r, _ := m.get(k)
			out = append(out, overlayItem{key: k, row: r})
		}
	}
	return out
}

// overlayKey makes a key with the state prefix, so that sortedItems' head
// integers see realistic bytes; a few keys are shorter than the head.
func overlayKey(i int) string {
	if i%17 == 0 {
		return fmt.Sprintf("t\x00\x00\x00\x07%c", byte(i))
	}
	return fmt.Sprintf("t\x00\x00\x00\x07%c%c\x00%03d", byte(i%3), byte(i%251), i)
}

// freshOverlayKey makes the i-th key putFresh writes: never one
// overlayKey makes (its byte after the prefix is 3, theirs below).
func freshOverlayKey(i int) string {
	return fmt.Sprintf("t\x00\x00\x00\x07\x03%c\x00%05d", byte(i%251), i)
}

func itemsString(items []overlayItem) string {
	s := ""
	for _, it := range items {
		s += fmt.Sprintf("%q=%v ", it.key, it.row)
	}
	return s
}

// TestOverlayMatchesModel drives the overlay with writes, deletes, seals,
// prunes, point reads and range scans read in small batches (so that the
// merge of the unsealed writes and several runs is cut at a truncated
// layer), and compares each read with the model. Keys outnumber a scan
// batch, and prunes lag seals, so several runs overlap.
func TestOverlayMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		o := newOverlay()
		m := &overlayModel{pending: map[string]types.Row{}, fresh: map[string]bool{}, dead: map[string]bool{}}
		epoch := uint64(0)
		genKey := func(rt *rapid.T) string { return overlayKey(rapid.IntRange(0, modelKeys).Draw(rt, "key")) }
		rt.Repeat(map[string]func(*rapid.T){
			"put": func(rt *rapid.T) {
				n := rapid.IntRange(1, modelPuts).Draw(rt, "n")
				for range n {
					k := genKey(rt)
					var row types.Row
					if !rapid.Bool().Draw(rt, "delete") {
						row = types.Row{int64(rapid.IntRange(0, 1000).Draw(rt, "v"))}
					}
					o.put([]byte(k), row)
					m.pending[k] = row
				}
			},
			"putFresh": func(rt *rapid.T) {
				// A key never written before, or one no layer holds again.
				var k string
				if len(m.dead) > 0 && rapid.Bool().Draw(rt, "dead again") {
					k = rapid.SampledFrom(slices.Sorted(maps.Keys(m.dead))).Draw(rt, "dead key")
					delete(m.dead, k)
				} else {
					k = freshOverlayKey(m.nFresh)
					m.nFresh++
				}
				row := types.Row{int64(rapid.IntRange(0, 1000).Draw(rt, "v"))}
				o.putFreshH(o.keyHash([]byte(k)), []byte(k), row)
				m.pending[k], m.fresh[k] = row, true
			},
			"rewriteFresh": func(rt *rapid.T) {
				if len(m.fresh) == 0 {
					rt.Skip("no fresh keys this epoch")
				}
				k := rapid.SampledFrom(slices.Sorted(maps.Keys(m.fresh))).Draw(rt, "fresh key")
				var row types.Row
				if rapid.IntRange(0, 3).Draw(rt, "kind") > 0 {
					row = nil // mostly deleted again
				} else {
					row = types.Row{int64(rapid.IntRange(0, 1000).Draw(rt, "v"))}
				}
				o.put([]byte(k), row)
				m.pending[k] = row
			},
			"seal": func(rt *rapid.T) {
				epoch++
				got := runItems(o.seal(epoch))
				m.seal(epoch)
				want := (&overlayModel{runs: m.runs[len(m.runs)-1:]}).span("", "\xff")
				if itemsString(got) != itemsString(want) {
					rt.Fatalf("sealed items:\n got %s\nwant %s", itemsString(got), itemsString(want))
				}
			},
			"prune": func(rt *rapid.T) {
				if len(m.runs) == 0 {
					rt.Skip("no runs")
				}
				c := rapid.Uint64Range(m.runs[0].epoch, epoch).Draw(rt, "committed")
				o.prune(c)
				for len(m.runs) > 0 && m.runs[0].epoch <= c {
					m.runs = m.runs[1:]
				}
			},
			"get": func(rt *rapid.T) {
				k := genKey(rt)
				if rapid.Bool().Draw(rt, "a fresh key") && m.nFresh > 0 {
					k = freshOverlayKey(rapid.IntRange(0, m.nFresh-1).Draw(rt, "fresh"))
				}
				got, ok := o.get([]byte(k))
				want, wok := m.get(k)
				if ok != wok || fmt.Sprint(got.row) != fmt.Sprint(want) {
					rt.Fatalf("get %q: got %v,%v want %v,%v", k, got.row, ok, want, wok)
				}
			},
			"scan": func(rt *rapid.T) {
				a, b := genKey(rt), genKey(rt)
				lo, hi := min(a, b), max(a, b)
				hasHi := rapid.Bool().Draw(rt, "bounded")
				if !hasHi {
					hi = "\xff"
				}
				batch := rapid.IntRange(1, 70).Draw(rt, "batch")
				var got []overlayItem
				sp := overlaySpan{lo: lo, hi: hi, hasHi: hasHi}
				for {
					start := len(got)
					var done bool
					got, done = o.fill(got, sp, batch)
					if done {
						break
					}
					if len(got) == start {
						rt.Fatalf("fill made no progress")
					}
					sp.lo, sp.after = got[len(got)-1].key, true
				}
				if want := m.span(lo, hi); itemsString(got) != itemsString(want) {
					rt.Fatalf("scan [%q, %q):\n got %s\nwant %s", lo, hi, itemsString(got), itemsString(want))
				}
			},
		})
		if o.len() < len(m.pending) {
			rt.Fatalf("len %d below %d unsealed writes", o.len(), len(m.pending))
		}
	})
}

// modelKeys and modelPuts bound the model test's keys and the writes of
// one put step.
var modelKeys, modelPuts = 200, 40

// TestOverlayMatchesModelLarge: the same model test with epochs of
// thousands of writes, so sorts take the radix path (radixFrom) in scans,
// in seals and in seals that reuse a scan's order.
func TestOverlayMatchesModelLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("slow; the small model test covers the same steps")
	}
	modelKeys, modelPuts = 6000, 600
	defer func() { modelKeys, modelPuts = 200, 40 }()
	TestOverlayMatchesModel(t)
}

// TestOverlayMatchesModelWhenHashesCollide: the same model test with
// every key hashing to one of three values, so nearly all of the key
// index's lookups go through its collision map.
func TestOverlayMatchesModelWhenHashesCollide(t *testing.T) {
	weakKeyHash = true
	defer func() { weakKeyHash = false }()
	TestOverlayMatchesModel(t)
}

// TestOverlayMatchesModelWithTree: the same model test where a scan after
// a few writes switches the epoch to the tree (overlay_order.go), so both
// ways of keeping the unsealed writes in order are compared.
func TestOverlayMatchesModelWithTree(t *testing.T) {
	mergeRatio = 2
	defer func() { mergeRatio = 256 }()
	TestOverlayMatchesModel(t)
}

// TestOverlayMatchesModelFiltering: the same model test where a bounded
// scan of even one unordered item picks its items in a pass instead of
// sorting (until the passes add up to a sort), so scans through picks,
// through the sorted order and through both at once are compared.
func TestOverlayMatchesModelFiltering(t *testing.T) {
	filterFrom = 1
	defer func() { filterFrom = 64 }()
	TestOverlayMatchesModel(t)
}

// runItems returns a run's items in key order.
func runItems(r *sealedRun) []overlayItem {
	out := make([]overlayItem, r.len())
	for j := range out {
		out[j] = *r.item(j)
	}
	return out
}
