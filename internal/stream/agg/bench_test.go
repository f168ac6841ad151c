package agg

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// BenchmarkHashAggUpdate measures count(*) + sum(v) GROUP BY g over
// 1024-row insert chunks, a barrier (and commit) every 16 chunks. Run with
// go test -bench HashAggUpdate ./internal/stream/agg/.
func BenchmarkHashAggUpdate(b *testing.B) {
	benchAgg(b, 1000, ac(plan.AggCountStar, i64), ac(plan.AggSum, types.TDecimal, 1))
}

// BenchmarkHashAggMax is max(v) GROUP BY g over values drawn from 10⁷, so
// nearly every input row adds a row to the call's value table, as a bulk
// load into a group-by view with max does.
func BenchmarkHashAggMax(b *testing.B) {
	benchAgg(b, 10_000_000, ac(plan.AggMax, i64, 1))
}

// benchAgg runs calls GROUP BY g over insert chunks of (g, v), v below
// values.
func benchAgg(b *testing.B, values int, calls ...plan.AggCall) {
	for _, groups := range []int{16, 1024, 65536} {
		b.Run("groups="+itoa(groups), func(b *testing.B) {
			st := streamtest.OpenStore(b)
			in := tsch(i64, i64)
			rng := rand.New(rand.NewPCG(1, 2))
			src := &streamtest.CycleSource{Types: in, PerEpoch: 16}
			for range 16 {
				bld := types.NewBuilder(in, 1024)
				var c *types.Chunk
				for c == nil {
					c = bld.Append(types.Insert, types.Row{int64(rng.IntN(groups)), int64(rng.IntN(values))})
				}
				src.Chunks = append(src.Chunks, c)
			}
			node := planAgg(in, []int{0}, calls, 1)
			env := &stream.Env{Store: st, ActorID: testActor}
			a, err := NewAgg(env, src, node)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			for src.Sent < b.N || src.InEpoch != 0 {
				msg, err := a.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if msg.Barrier != nil {
					if err := st.Commit(ctx, msg.Barrier.Epoch, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(src.Sent*1024)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
