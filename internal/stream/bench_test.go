package stream

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

func benchChunk(n int) *types.Chunk {
	b := types.NewBuilder(ii, n)
	for i := 0; i < n-1; i++ {
		b.Append(types.Insert, types.Row{int64(i), int64(i * 7)})
	}
	return b.Append(types.Insert, types.Row{int64(n), int64(n)})
}

// BenchmarkExchange measures one producer sending 1024-row chunks through
// a bounded channel to a Merge on another goroutine.
func BenchmarkExchange(b *testing.B) {
	ctx := context.Background()
	c := benchChunk(types.DefaultChunkSize)
	out, in := NewChannel(1, 2, DefaultChannelCapacity)
	m := NewMerge(ii, []*Input{in})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < b.N; i++ {
			if _, err := m.Next(ctx); err != nil {
				panic(err)
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := out.Send(ctx, ChunkMsg(c)); err != nil {
			b.Fatal(err)
		}
	}
	<-done
	b.ReportMetric(float64(b.N)*float64(types.DefaultChunkSize)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkHashDispatch measures routing 1024-row chunks by hash to n
// outputs that are drained by one consumer per output.
func BenchmarkHashDispatch(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("outputs=%d", n), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := benchChunk(types.DefaultChunkSize)
			outs := make([]*Output, n)
			done := make(chan struct{}, n)
			for k := range outs {
				o, in := NewChannel(1, ActorID(k+2), DefaultChannelCapacity)
				outs[k] = o
				go func() {
					defer func() { done <- struct{}{} }()
					for {
						select {
						case _, ok := <-in.ch:
							if !ok {
								return
							}
						case <-ctx.Done():
							return
						}
					}
				}()
			}
			d, err := NewHashDispatcher(outs, []int{0}, EvenVNodeOwners(n))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := d.Dispatch(ctx, ChunkMsg(c)); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			for _, o := range outs {
				o.Close()
			}
			for range outs {
				<-done
			}
			b.ReportMetric(float64(b.N)*float64(types.DefaultChunkSize)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
