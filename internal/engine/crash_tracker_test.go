package engine

import (
	"strings"
	"testing"
)

// TestCrashTrackerResolve checks the crash test's checker on its own: a
// statement in flight resolves as applied or not applied, and a partial
// application, a lost acknowledged row, a resurrected or duplicated row,
// or a changed row id fails.
func TestCrashTrackerResolve(t *testing.T) {
	// Writer 1 owns keys 1, 5, 9, …; writer 2 owns 2, 6, ….
	acked := []string{
		"B 1 1 t i:1:10 i:5:50 i:9:90", "A 1 1",
		"B 1 2 u i:1:7 i:13:3", "A 1 2",
		"B 2 1 t i:2:20", "A 2 1",
	}
	base := [][3]int64{{1, 10, 101}, {5, 50, 102}, {9, 90, 103}, {2, 20, 104}}
	cases := []struct {
		name     string
		inflight string // writer 1's statement in flight, if any
		t        [][3]int64
		u        [][3]int64
		want     string // outcome of writer 1's statement, or an error's text
	}{
		{"exact", "", base, [][3]int64{{1, 7}, {13, 3}}, ""},
		{"applied", "B 1 3 t d:5:50:102 u:9:90:91:103", [][3]int64{{1, 10, 101}, {9, 91, 103}, {2, 20, 104}},
			[][3]int64{{1, 7}, {13, 3}}, ": applied"},
		{"not applied", "B 1 3 t d:5:50:102 u:9:90:91:103", base, [][3]int64{{1, 7}, {13, 3}}, "not applied"},
		{"half applied", "B 1 3 t d:5:50:102 u:9:90:91:103", [][3]int64{{1, 10, 101}, {9, 90, 103}, {2, 20, 104}},
			[][3]int64{{1, 7}, {13, 3}}, "neither outcome"},
		{"either", "B 1 3 u d:17:0", base, [][3]int64{{1, 7}, {13, 3}}, "either"},
		{"lost", "", base[1:], [][3]int64{{1, 7}, {13, 3}}, "lost 1"},
		{"lost u", "", base, [][3]int64{{1, 7}}, "lost 1"},
		{"resurrected", "", append(base[:4:4], [3]int64{21, 1, 105}), [][3]int64{{1, 7}, {13, 3}}, "phantom 1"},
		{"duplicated", "", append(base[:4:4], [3]int64{5, 50, 106}), [][3]int64{{1, 7}, {13, 3}}, "duplicated"},
		{"row id changed", "", [][3]int64{{1, 10, 101}, {5, 50, 999}, {9, 90, 103}, {2, 20, 104}},
			[][3]int64{{1, 7}, {13, 3}}, "lost 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker()
			for _, l := range acked {
				if err := tr.line(l); err != nil {
					t.Fatal(err)
				}
			}
			// Learn the row ids, as the first recovery after the inserts does.
			if _, err := tr.resolve(observe(base, [][3]int64{{1, 7}, {13, 3}})); err != nil {
				t.Fatal(err)
			}
			if tc.inflight != "" {
				if err := tr.line(tc.inflight); err != nil {
					t.Fatal(err)
				}
			}
			notes, err := tr.resolve(observe(tc.t, tc.u))
			got := strings.Join(notes, ",")
			if err != nil {
				got = err.Error()
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("resolve = %q, want %q", got, tc.want)
			}
		})
	}
}
