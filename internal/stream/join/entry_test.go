package join

import (
	"fmt"
	"maps"
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
// (which replaces its row), and removing any key, with reads in between,
// leaves each key's latest row once, in order once the entry is read.
func TestEntryPutMatchesMapModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := &keyEntry{}
		model := map[string]int64{} // pk → the version stored last
		version := int64(0)
		check := func() {
			e.inOrder()
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
		for range rapid.IntRange(1, 80).Draw(t, "ops") {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0, 1, 2:
				pk := fmt.Sprintf("%02d", rapid.IntRange(0, 30).Draw(t, "pk"))
				version++
				e.putRow(&storedRow{pk: pk, degree: version})
				model[pk] = version
			case 3, 4:
				if len(model) == 0 {
					continue
				}
				pk := rapid.SampledFrom(slices.Sorted(maps.Keys(model))).Draw(t, "del")
				i, found := e.find([]byte(pk))
				if !found || e.rows[i].pk != pk || e.rows[i].degree != model[pk] {
					t.Fatalf("row %s (version %d) not found (at %d, %v)", pk, model[pk], i, found)
				}
				e.removeAt(i)
				delete(model, pk)
				if _, again := e.find([]byte(pk)); again {
					t.Fatalf("row %s found after its removal", pk)
				}
			default:
				check()
			}
		}
		check()
	})
}
