package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestReadDMLMatchesStored: whatever mix of appends (some too big for the
// in-memory records, and in the second run some kept in segments),
// reads from any position and truncations, ReadDML returns exactly what
// reading the log from Pebble returns.
func TestReadDMLMatchesStored(t *testing.T) {
	defer func(n, m int) { recentDMLBytes, segmentFrom = n, m }(recentDMLBytes, segmentFrom)
	recentDMLBytes = 1 << 10
	for _, seg := range []int{1 << 20, 300} {
		segmentFrom = seg
		t.Run(fmt.Sprint("segmentFrom=", seg), testReadDMLMatchesStored)
	}
}

func testReadDMLMatchesStored(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		s := openMem(t, nil)
		const table = 9
		var last, truncated uint64
		for range rapid.IntRange(1, 60).Draw(rt, "steps") {
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0, 1, 2:
				size := rapid.SampledFrom([]int{1, 40, 300, 700}).Draw(rt, "size")
				payload := []byte(fmt.Sprintf("%0*d", size, last+1))
				seq, err := s.AppendDML(ctx, table, payload)
				if err != nil {
					rt.Fatal(err)
				}
				last = seq
			case 3:
				through := rapid.Uint64Range(0, last).Draw(rt, "through")
				if err := s.TruncateDML(ctx, table, through); err != nil {
					rt.Fatal(err)
				}
				truncated = max(truncated, through)
			default:
				from := rapid.Uint64Range(truncated+1, last+2).Draw(rt, "from")
				n := rapid.IntRange(1, 8).Draw(rt, "max")
				got, err := s.ReadDML(table, from, n)
				if err != nil {
					rt.Fatal(err)
				}
				want, err := s.readDMLStored(table, from, last, n)
				if err != nil {
					rt.Fatal(err)
				}
				if !slices.EqualFunc(got, want, func(a, b DMLRecord) bool {
					return a.Seq == b.Seq && string(a.Payload) == string(b.Payload)
				}) {
					rt.Fatalf("ReadDML(%d, %d): %d records from %v, stored %d from %v", from, n, len(got), seqOf(got), len(want), seqOf(want))
				}
			}
		}
	})
}

func seqOf(recs []DMLRecord) []uint64 {
	var out []uint64
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}
