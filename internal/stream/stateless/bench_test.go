package stateless

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// repeatSource returns the same chunk forever (after one barrier); the
// chunk is never written to, so sharing it is sound.
type repeatSource struct {
	c       *types.Chunk
	started bool
}

func (r *repeatSource) Next(ctx context.Context) (stream.Message, error) {
	if !r.started {
		r.started = true
		return stream.NewBarrier(1), nil
	}
	return stream.ChunkMsg(r.c), nil
}

func (r *repeatSource) Schema() []types.Type { return r.c.Types() }

// BenchmarkProjectFilter runs SELECT a+b, a*c, b FROM t WHERE a+b > 1024
// over 1024-row chunks of three bigint columns (every 16th value NULL, half
// the rows passing), reporting rows per second. Run with
//
//	go test -run - -bench ProjectFilter ./internal/stream/stateless/
func BenchmarkProjectFilter(b *testing.B) {
	const n = types.DefaultChunkSize
	cols := make([]types.Column, 3)
	for j := range cols {
		cols[j] = types.MustColumn(i64, n)
	}
	ops := make([]types.Op, n)
	for i := 0; i < n; i++ {
		for j, col := range cols {
			if (i+j)%16 == 0 {
				col.Append(nil)
			} else {
				col.Append(int64(i * (j + 1)))
			}
		}
		ops[i] = types.Op(i % 2)
	}
	src := &repeatSource{c: types.NewChunk(cols, ops)}
	env := &stream.Env{Expr: &expr.Context{}}
	proj, err := Build(env, nil, projectNode(
		expr.Func("+", in(0, i64), in(1, i64)),
		expr.Func("*", in(0, i64), in(2, i64)),
		in(1, i64)), []stream.Executor{src})
	if err != nil {
		b.Fatal(err)
	}
	filt, err := Build(env, nil, filterNode(expr.Func(">", in(0, i64), lit(int64(n), i64))), []stream.Executor{proj})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := filt.Next(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	rows := 0
	for i := 0; i < b.N; i++ {
		msg, err := filt.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		rows += msg.Chunk.Cardinality()
	}
	b.StopTimer()
	if rows == 0 {
		b.Fatal("no rows passed")
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
}
