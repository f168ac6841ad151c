package join

import (
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// BenchmarkHashJoinProbe probes 1024-row left chunks against a right state
// of N rows (one per key) with every key in the cache. Each probe chunk is
// inserted then deleted, so the left state stays small and every input
// row matches exactly one stored row. Run with
// go test -bench HashJoinProbe ./internal/stream/join/.
func BenchmarkHashJoinProbe(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 16} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) { benchProbe(b, n) })
	}
}

// BenchmarkHashJoinProbeColdCache is BenchmarkHashJoinProbe with a state
// 64 times larger than the cache: nearly every probe misses and reads its
// key from the state table (a prefix scan).
func BenchmarkHashJoinProbeColdCache(b *testing.B) {
	const n = 1 << 16
	benchProbeCache(b, n, n/64)
}

func benchProbe(b *testing.B, n int) { benchProbeCache(b, n, 2*n) }

func benchProbeCache(b *testing.B, n, cacheEntries int) {
	const chunkRows = 1024
	store := streamtest.OpenStore(b)
	c := kvCase(plan.InnerJoin)
	seedRight(b, store, c, n, func(i int) int64 { return int64(i) })
	var chunks []*types.Chunk
	for start := 0; start < n; start += chunkRows {
		for _, op := range []types.Op{types.Insert, types.Delete} {
			bl := types.NewBuilder(c.lt, chunkRows)
			for i := start; i < start+chunkRows; i++ {
				// The builder hands back the chunk when the last row fills it.
				if full := bl.Append(op, types.Row{int64(i), int64(i % n)}); full != nil {
					chunks = append(chunks, full)
				}
			}
		}
	}
	left := &streamtest.CycleSource{Types: c.lt, Chunks: chunks, PerEpoch: 64, Epoch: 1}
	right := &streamtest.CycleSource{Types: c.rt, Epoch: 1}
	cfg := config{chunkSize: chunkRows, cacheEntries: cacheEntries, largeKeyRows: defaultLargeKeyRows}
	h := newHarness(b, store, c, cfg, left, right)
	// Warm the cache: one pass over every chunk.
	pullRows(b, h, len(chunks)*chunkRows)
	b.ResetTimer()
	probed := pullRows(b, h, b.N*chunkRows)
	b.ReportMetric(float64(probed)/b.Elapsed().Seconds(), "rows/s")
}

// pullRows pulls output until at least want rows came out and returns how
// many did. Every input row yields one output row here.
func pullRows(b *testing.B, h *harness, want int) int {
	got := 0
	for got < want {
		msg := h.next()
		if msg.Chunk != nil {
			got += msg.Chunk.Cardinality()
		}
	}
	return got
}
