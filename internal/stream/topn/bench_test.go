package topn

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// BenchmarkTopN feeds chunks of 512 random inserts and 512 deletes (the
// oldest rows, so about 2048 stay live) into PARTITION BY g ORDER BY v DESC
// LIMIT 10 over 1 or 100 groups, on an in-memory store, with a barrier
// every 10 chunks. One op is one chunk. Run with
// go test -run XXX -bench TopN ./internal/stream/topn/.
func BenchmarkTopN(b *testing.B) {
	for _, groups := range []int{1, 100} {
		b.Run(map[int]string{1: "global", 100: "groups=100"}[groups], func(b *testing.B) {
			benchTopN(b, groups)
		})
	}
}

func benchTopN(b *testing.B, groups int) {
	schema := propSchema
	order := []plan.ColumnOrder{{Column: 2, Order: codec.Order{Desc: true}}}
	tn := &plan.TopN{OrderBy: order, Limit: 10, GroupKeys: []int{1}}
	tn.Table = tableFor(schema, tn.GroupKeys, order, []int{0})
	env := &stream.Env{Store: streamtest.OpenStore(b), ActorID: testActor}
	src := stream.NewMockSource(schema, stream.NewBarrier(1))
	exec, err := Build(env, nil, topNNode(schema, tn), []stream.Executor{src})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var live []types.Row
	var k int64
	ctx := context.Background()
	epoch := uint64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bld := types.NewBuilder(schema, 1024)
		for range 512 {
			k++
			r := types.Row{k, int64(rng.IntN(groups)), rng.Int64N(1 << 20), int64(0)}
			live = append(live, r)
			bld.Append(types.Insert, r)
		}
		for len(live) > 2048 {
			bld.Append(types.Delete, live[0])
			live = live[1:]
		}
		src.Push(stream.ChunkMsg(bld.Take()))
		if i%10 == 9 {
			epoch++
			src.Push(stream.NewBarrier(epoch))
		}
		for {
			if _, err := exec.Next(ctx); err != nil {
				if errors.Is(err, stream.ErrScriptEnd) {
					break
				}
				b.Fatal(err)
			}
		}
	}
}
