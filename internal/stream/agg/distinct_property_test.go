package agg

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// TestDistinctProperty: random inserts, deletes and updates of (a, b) rows
// with DISTINCT over b; the output applied to a set must equal the set of
// live b values after every barrier.
func TestDistinctProperty(t *testing.T) {
	in := tsch(i32, str)
	for _, cache := range []int{1, 1000} {
		t.Run("cache="+itoa(cache), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				st := streamtest.OpenStore(rt)
				src := stream.NewMockSource(in, stream.NewBarrier(1))
				n := &plan.Node{Kind: plan.KindDistinct, Schema: tsch(str), Distinct: planDistinct(in, []int{1}, 1)}
				e, err := Build(testEnv(st, cache), nil, n, []stream.Executor{src})
				if err != nil {
					rt.Fatal(err)
				}
				var live []types.Row
				out := map[string]bool{}
				epoch := uint64(1)
				gen := func() types.Row {
					return types.Row{int64(rapid.IntRange(0, 2).Draw(rt, "a")),
						rapid.SampledFrom([]any{nil, "x", "y", "z"}).Draw(rt, "b")}
				}
				pull := func() {
					for {
						msg, err := e.Next(context.Background())
						if err != nil {
							rt.Fatal(err)
						}
						if msg.Barrier != nil {
							break
						}
						for i := 0; msg.Chunk != nil && i < msg.Chunk.Capacity(); i++ {
							k := types.FormatToken(msg.Chunk.Row(i)[0], str)
							if msg.Chunk.Op(i).IsInsert() == out[k] {
								rt.Fatalf("op %v on %s, present=%v", msg.Chunk.Op(i), k, out[k])
							}
							out[k] = msg.Chunk.Op(i).IsInsert()
							if !out[k] {
								delete(out, k)
							}
						}
					}
					want := map[string]bool{}
					for _, r := range live {
						want[types.FormatToken(r[1], str)] = true
					}
					if !maps.Equal(out, want) {
						rt.Fatalf("output %v, want %v", out, want)
					}
				}
				pull()
				for range rapid.IntRange(1, 10).Draw(rt, "epochs") {
					bld := types.NewBuilder(in, 64)
					for range rapid.IntRange(0, 12).Draw(rt, "rows") {
						switch op := rapid.IntRange(0, 2).Draw(rt, "op"); {
						case op == 0 || len(live) == 0:
							r := gen()
							live = append(live, r)
							bld.Append(types.Insert, r)
						case op == 1:
							i := rapid.IntRange(0, len(live)-1).Draw(rt, "i")
							bld.Append(types.Delete, live[i])
							live = slices.Delete(live, i, i+1)
						default:
							i := rapid.IntRange(0, len(live)-1).Draw(rt, "i")
							r := gen()
							bld.Append(types.UpdateDelete, live[i])
							bld.Append(types.UpdateInsert, r)
							live[i] = r
						}
					}
					if c := bld.Take(); c != nil {
						src.Push(stream.ChunkMsg(c))
					}
					epoch++
					src.Push(stream.NewBarrier(epoch))
					pull()
				}
			})
		})
	}
}
