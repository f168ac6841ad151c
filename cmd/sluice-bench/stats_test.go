package main

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[19-i] = float64(i + 1) // descending: percentile must sort
	}
	for _, tc := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{7}, 50, 7},
		{[]float64{7}, 99, 7},
		{[]float64{3, 1, 2}, 50, 2},
		{[]float64{4, 1, 3, 2}, 50, 2}, // nearest rank: ceil(0.5*4) = 2nd
		{twenty, 50, 10},
		{twenty, 95, 19},
		{twenty, 99, 20}, // of 20 samples p99 is the largest
		{twenty, 100, 20},
		{twenty, 1, 1},
	} {
		if got := percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Error("percentile of nothing is not NaN")
	}
	if twenty[0] != 20 {
		t.Error("percentile sorted its argument in place")
	}
}

func TestMillis(t *testing.T) {
	got := millis([]time.Duration{1500 * time.Microsecond, 2 * time.Second})
	if got[0] != 1.5 || got[1] != 2000 {
		t.Fatalf("millis = %v", got)
	}
}
