package agg

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// cycleSource replays prepared chunks forever, with a barrier first and
// after every `every` chunks.
type cycleSource struct {
	chunks []*types.Chunk
	every  int
	sent   int // chunks sent
	epoch  uint64
	inRun  int
}

func (s *cycleSource) Schema() []types.Type { return tsch(i64, i64) }

func (s *cycleSource) Next(ctx context.Context) (stream.Message, error) {
	if s.epoch == 0 || s.inRun == s.every {
		s.epoch++
		s.inRun = 0
		return stream.NewBarrier(s.epoch), nil
	}
	c := s.chunks[s.sent%len(s.chunks)]
	s.sent++
	s.inRun++
	return stream.ChunkMsg(c), nil
}

// BenchmarkHashAggUpdate measures count(*) + sum(v) GROUP BY g over
// 1024-row insert chunks, a barrier (and commit) every 16 chunks. Run with
// go test -bench HashAggUpdate ./internal/stream/agg/.
func BenchmarkHashAggUpdate(b *testing.B) {
	for _, groups := range []int{16, 1024, 65536} {
		b.Run("groups="+itoa(groups), func(b *testing.B) {
			st := openStore(b)
			in := tsch(i64, i64)
			rng := rand.New(rand.NewPCG(1, 2))
			src := &cycleSource{every: 16}
			for range 16 {
				bld := types.NewBuilder(in, 1024)
				var c *types.Chunk
				for c == nil {
					c = bld.Append(types.Insert, types.Row{int64(rng.IntN(groups)), int64(rng.IntN(1000))})
				}
				src.chunks = append(src.chunks, c)
			}
			node := planAgg(in, []int{0}, []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggSum, types.TDecimal, 1)}, 1)
			env := &stream.Env{Store: st, ActorID: testActor}
			a, err := NewAgg(env, src, node)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			for src.sent < b.N || src.inRun != 0 {
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
			b.ReportMetric(float64(src.sent*1024)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
