package stream

import (
	"math"
	"math/bits"
	"slices"
	"sync"
)

// JoinStats is one join actor's amplification: how many rows each probe
// row matched, as a histogram, and the keys whose probe rows matched the
// most of late. The join adds to it in bulk (JoinStats.Add), at barriers
// and while one probe row runs long, never per row; a scrape reads it.
type JoinStats struct {
	mu sync.Mutex
	// buckets[i] counts probe rows with matches in (AmpBound(i-1),
	// AmpBound(i)]: buckets[0] those without a match, buckets[1] those
	// with one, buckets[2] two, buckets[3] three or four, and so on.
	buckets [AmpBuckets]uint64
	sum     uint64
	// heavy are the keys of the most matches for one probe row, the most
	// first; prev is the list of the epochs before (Rotate), so a key is
	// shown for a while after it stops.
	heavy, prev []HeavyKey
}

// AmpBuckets is the number of buckets: the last holds 2^(AmpBuckets-2)
// matches and more.
const AmpBuckets = 24

// HeavyKeys is how many heavy keys a JoinStats keeps.
const HeavyKeys = 5

// HeavyKey is a join key and the most rows one probe row of it matched.
type HeavyKey struct {
	Key     string
	Matches int64
}

// AmpBucket is the bucket of a probe row that matched n rows.
func AmpBucket(n int64) int {
	if n <= 0 {
		return 0
	}
	return min(bits.Len64(uint64(n-1))+1, AmpBuckets-1)
}

// AmpBound is the upper bound of bucket i (matches ≤ it).
func AmpBound(i int) float64 {
	if i == 0 {
		return 0
	}
	return float64(uint64(1) << (i - 1))
}

// Add folds in a batch of probe rows: their bucket counts, the sum of
// their matches, and heavy-key candidates.
func (s *JoinStats) Add(buckets *[AmpBuckets]uint64, sum uint64, heavy []HeavyKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range buckets {
		s.buckets[i] += n
	}
	s.sum += sum
	for _, h := range heavy {
		s.heavy = KeepHeavy(s.heavy, h)
	}
}

// Rotate starts a new period of heavy keys, keeping the last one's for
// Snapshot: keys show for one to two periods after their last heavy row.
func (s *JoinStats) Rotate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prev, s.heavy = s.heavy, s.prev[:0]
}

// Snapshot returns the bucket counts, the sum of matches and the heavy
// keys of the last two periods, the most first.
func (s *JoinStats) Snapshot() (buckets [AmpBuckets]uint64, sum uint64, heavy []HeavyKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	heavy = slices.Clone(s.heavy)
	for _, h := range s.prev {
		heavy = KeepHeavy(heavy, h)
	}
	return s.buckets, s.sum, heavy
}

// KeepHeavy puts h into hs, a list of at most HeavyKeys keys by matches,
// the most first, each key once with its most matches.
func KeepHeavy(hs []HeavyKey, h HeavyKey) []HeavyKey {
	if i := slices.IndexFunc(hs, func(x HeavyKey) bool { return x.Key == h.Key }); i >= 0 {
		if hs[i].Matches >= h.Matches {
			return hs
		}
		hs = slices.Delete(hs, i, i+1)
	}
	i, _ := slices.BinarySearchFunc(hs, h.Matches, func(x HeavyKey, m int64) int {
		switch {
		case x.Matches > m:
			return -1
		case x.Matches < m:
			return 1
		}
		return 0
	})
	if i >= HeavyKeys {
		return hs
	}
	hs = slices.Insert(hs, i, h)
	if len(hs) > HeavyKeys {
		hs = hs[:HeavyKeys]
	}
	return hs
}

// Qualifies reports whether a probe row of m matches would enter hs.
func Qualifies(hs []HeavyKey, m int64) bool {
	return len(hs) < HeavyKeys || hs[len(hs)-1].Matches < m
}

// AmpQuantile is the upper bound of the bucket holding the q quantile of
// count probe rows, given the heaviest key's matches (the last bucket's
// bound).
func AmpQuantile(buckets [AmpBuckets]uint64, count uint64, q float64, heaviest int64) float64 {
	if count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(count)))
	var seen uint64
	for i, n := range buckets {
		if seen += n; seen >= rank {
			return AmpBucketBound(i, heaviest)
		}
	}
	return AmpBucketBound(AmpBuckets-1, heaviest)
}

// AmpBucketBound is bucket i's upper bound; the unbounded last bucket's
// is the heaviest key's matches (or the bucket's lower bound).
func AmpBucketBound(i int, heaviest int64) float64 {
	if i < AmpBuckets-1 {
		return AmpBound(i)
	}
	return max(float64(heaviest), AmpBound(i-1))
}
