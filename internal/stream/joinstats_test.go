package stream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/task"
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

// TestInputWaitsCountOnce: an actor whose two exchange inputs feed an
// Aligned (a join's, a union's) counts its wait for input once, where
// the Aligned waits, not once per input merge under its pumps.
func TestInputWaitsCountOnce(t *testing.T) {
	g, ctx := task.NewGroup(context.Background())
	defer func() { g.Cancel(); _ = g.Wait() }()
	var stats ActorStats
	var outs []*Output
	var merges []Executor
	for i := range 2 {
		out, in := NewChannel(ActorID(i+1), 9, 4)
		CountFor(out, in, nil, &stats)
		outs = append(outs, out)
		merges = append(merges, NewMerge(ii, []*Input{in}))
	}
	a := NewAligned(ctx, g, merges, &stats)
	start := time.Now()
	go func() {
		time.Sleep(300 * time.Millisecond)
		for _, o := range outs {
			_ = o.Send(ctx, TextChunk(ii, "+ 1 2"))
		}
	}()
	for range 2 {
		if _, msg, err := a.Next(ctx); err != nil || msg.Chunk == nil {
			t.Fatalf("want a chunk, got %v %v", msg, err)
		}
	}
	wall := time.Since(start)
	if w := stats.InputBlocked.Total(); w < 200*time.Millisecond || w > wall*3/2 {
		t.Fatalf("waited %v for input in %v, want it counted once", w, wall)
	}
	if n := stats.RowsIn.Load(); n != 2 {
		t.Fatalf("%d rows in, want 2", n)
	}
}
