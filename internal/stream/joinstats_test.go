package stream

import (
	"fmt"
	"testing"
)

// TestAmpBuckets: a probe row of n matches is counted in the first bucket
// whose bound is at least n.
func TestAmpBuckets(t *testing.T) {
	for _, n := range []int64{0, 1, 2, 3, 4, 5, 8, 9, 1000, 1 << 21, 1<<21 + 1, 1 << 40} {
		i := AmpBucket(n)
		if i < AmpBuckets-1 && (float64(n) > AmpBound(i) || (i > 0 && float64(n) <= AmpBound(i-1))) {
			t.Errorf("%d matches in bucket %d, bounds (%v, %v]", n, i, AmpBound(i-1), AmpBound(i))
		}
		if i == AmpBuckets-1 && float64(n) <= AmpBound(AmpBuckets-2) {
			t.Errorf("%d matches in the last bucket, but bucket %d holds up to %v", n, AmpBuckets-2, AmpBound(AmpBuckets-2))
		}
	}
}

// TestHeavyKeys: the list keeps the HeavyKeys keys of the most matches,
// each once with its most, the most first; a rotation keeps the last
// period's keys in the snapshot for one more period.
func TestHeavyKeys(t *testing.T) {
	var s JoinStats
	var b [AmpBuckets]uint64
	for i := range 10 {
		s.Add(&b, 0, []HeavyKey{{Key: fmt.Sprint(i), Matches: int64(i * 10)}})
	}
	s.Add(&b, 0, []HeavyKey{{Key: "9", Matches: 5}, {Key: "5", Matches: 500}})
	_, _, heavy := s.Snapshot()
	if got := fmt.Sprint(heavy); got != "[{5 500} {9 90} {8 80} {7 70} {6 60}]" {
		t.Fatalf("heavy keys %s", got)
	}
	s.Rotate()
	s.Add(&b, 0, []HeavyKey{{Key: "x", Matches: 75}})
	if _, _, heavy := s.Snapshot(); fmt.Sprint(heavy) != "[{5 500} {9 90} {8 80} {x 75} {7 70}]" {
		t.Fatalf("after a rotation: %v", heavy)
	}
	s.Rotate()
	if _, _, heavy := s.Snapshot(); fmt.Sprint(heavy) != "[{x 75}]" {
		t.Fatalf("after two rotations: %v", heavy)
	}
}
