package expr

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

func benchChunk(n int) *types.Chunk {
	a := &types.Vec[int64]{Typ: i64, Vals: make([]int64, n)}
	b := &types.Vec[int64]{Typ: i64, Vals: make([]int64, n)}
	for i := range a.Vals {
		a.Vals[i] = int64(i * 7)
		b.Vals[i] = int64(n - i)
	}
	return types.NewChunk([]types.Column{a, b}, nil)
}

func BenchmarkAddInt64(b *testing.B) {
	c := benchChunk(types.DefaultChunkSize)
	e := MustBuild(Func("+", Input(0, i64), Input(1, i64)), []types.Type{i64, i64})
	ctx := &Context{Strict: true}
	b.ReportAllocs()
	b.SetBytes(int64(types.DefaultChunkSize * 8))
	for b.Loop() {
		if _, err := e.Eval(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompareFilter(b *testing.B) {
	c := benchChunk(types.DefaultChunkSize)
	e := MustBuild(Func(">", Input(0, i64), Literal(int64(3000), i64)), []types.Type{i64, i64})
	ctx := &Context{Strict: true}
	b.ReportAllocs()
	b.SetBytes(int64(types.DefaultChunkSize * 8))
	for b.Loop() {
		if _, err := e.Eval(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}
