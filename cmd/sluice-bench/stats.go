package main

import (
	"math"
	"slices"
	"time"
)

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of xs: a
// value that was observed, so p99 of 20 samples is the largest. NaN for
// no samples.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// millis converts durations to float milliseconds for percentiles.
func millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

// timing is a wait that may not have ended before its cap.
type timing struct {
	d       time.Duration
	reached bool
}

func reachedAfter(d time.Duration) timing { return timing{d: d, reached: true} }
