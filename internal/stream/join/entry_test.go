package join

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestEntryMatchesSortedModel: appending rows in any order and removing
// any of them (the first one without ordering the entry) leaves the rows
// of a sorted set, in order once the entry is read.
func TestEntryMatchesSortedModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := &keyEntry{}
		var model []string
		next := 0
		for range rapid.IntRange(1, 80).Draw(t, "ops") {
			if len(model) == 0 || rapid.IntRange(0, 2).Draw(t, "op") > 0 {
				// New pks mostly rise, as row ids do, with some from behind.
				pk := fmt.Sprintf("%04d", next+rapid.IntRange(-20, 5).Draw(t, "jitter"))
				next += 3
				if slices.Contains(model, pk) {
					continue
				}
				e.appendRow(&storedRow{pk: pk})
				model = append(model, pk)
				continue
			}
			slices.Sort(model)
			at := 0 // mostly the oldest, as expiry removes
			if rapid.Bool().Draw(t, "anywhere") {
				at = rapid.IntRange(0, len(model)-1).Draw(t, "at")
			}
			pk := model[at]
			i, found := e.find([]byte(pk))
			if !found || e.rows[i].pk != pk {
				t.Fatalf("row %s not found (at %d, %v)", pk, i, found)
			}
			e.removeAt(i)
			model = slices.Delete(model, at, at+1)
		}
		slices.Sort(model)
		e.inOrder()
		var got []string
		for _, r := range e.rows {
			got = append(got, r.pk)
		}
		if !slices.Equal(got, model) {
			t.Fatalf("entry %v, want %v", got, model)
		}
	})
}

// TestEntryPutMatchesMapModel: storing rows in any order, a key again
// (which replaces its row), and removing any key (which makes later
// stores go in place until the next probe), with probes in between,
// leaves each key's latest row once, in order once the entry is read.
func TestEntryPutMatchesMapModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := &keyEntry{}
		model := map[string]int64{} // pk → the version stored last
		version := int64(0)
		check := func() { // as a probe reads it
			e.forProbe()
			want := slices.Sorted(maps.Keys(model))
			var got []string
			for _, r := range e.rows {
				got = append(got, r.pk)
				if r.degree != model[r.pk] {
					t.Fatalf("row %s: version %d, want %d", r.pk, r.degree, model[r.pk])
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("entry %v, want %v", got, want)
			}
		}
		keys := rapid.SampledFrom([]int{30, 300}).Draw(t, "keys")
		for range rapid.IntRange(1, 400).Draw(t, "ops") {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2, 3, 4:
				pk := fmt.Sprintf("%03d", rapid.IntRange(0, keys).Draw(t, "pk"))
				version++
				e.putRow(&storedRow{pk: pk, degree: version})
				model[pk] = version
			case 5, 6, 7:
				if len(model) == 0 {
					continue
				}
				pk := rapid.SampledFrom(slices.Sorted(maps.Keys(model))).Draw(t, "del")
				e.remove([]byte(pk))
				delete(model, pk)
			case 8:
				e.remove([]byte("absent"))
			default:
				check()
			}
		}
		check()
	})
}

// BenchmarkEntryUpdate: a retractable side's update of a random row of one
// key (its removal, then its store again out of order), over entries of
// several sizes.
func BenchmarkEntryUpdate(b *testing.B) {
	for _, n := range []int{64, 1000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := &keyEntry{}
			pks := make([]string, n)
			for i := range pks {
				pks[i] = fmt.Sprintf("%06d", i)
				e.putRow(&storedRow{pk: pks[i]})
			}
			r := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for b.Loop() {
				pk := pks[r.IntN(n)]
				e.remove([]byte(pk))
				e.putRow(&storedRow{pk: pk})
			}
		})
	}
}
