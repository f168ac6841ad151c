package source

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// watermarkFilter builds WATERMARK FOR ts AS ts - 10 over (v int, ts
// bigint) fed by script.
func watermarkFilter(t *testing.T, st *storage.Store, script string, first uint64) *WatermarkFilter {
	t.Helper()
	in := []types.Type{types.TInt64, types.TInt64}
	minus := expr.Func("-", expr.Input(1, types.TInt64), expr.Literal(int64(10), types.TInt64))
	n := &plan.Node{Kind: plan.KindWatermarkFilter, Schema: in,
		WatermarkFilter: &plan.WatermarkFilter{Col: 1, Expr: minus, Table: plan.WatermarkTable(9, types.TInt64)}}
	env := &stream.Env{Store: st, ActorID: 3, Index: 1, Parallelism: 2}
	src := stream.NewMockSource(in, streamtest.Script(in, script, first, 3)...)
	w, err := NewWatermarkFilter(env, n, src)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func renderAll(t *testing.T, e stream.Executor, until uint64) string {
	t.Helper()
	return streamtest.RenderUntilEpoch(t, e, until, 3)
}

// TestWatermarkFilter: the watermark is the largest expression seen; rows
// below it (and NULL times) are hidden, each advance follows its chunk, and
// a rebuilt filter restores its committed watermark, filters by it and
// announces it after its first barrier.
func TestWatermarkFilter(t *testing.T) {
	st := streamtest.OpenStore(t)
	w := watermarkFilter(t, st, `barrier
+ 1 100
+ 2 95
chunk
+ 3 85
+ 4 NULL
+ 5 92
chunk
+ 6 89
barrier
+ 7 130
barrier`, 1)
	want := `barrier 1
+ 1 100
+ 2 95
watermark 1 90
+ 3 85 D
+ 4 NULL D
+ 5 92
barrier 2
+ 7 130
watermark 1 120
barrier 3`
	if got := renderAll(t, w, 3); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := st.Commit(context.Background(), 2, nil); err != nil {
		t.Fatal(err)
	}
	st.AbortUncommitted()
	w = watermarkFilter(t, st, "barrier\n+ 8 89\n+ 9 91\nbarrier", 3)
	want = `barrier 3
watermark 1 90
+ 8 89 D
+ 9 91
barrier 4`
	if got := renderAll(t, w, 4); got != want {
		t.Fatalf("rebuilt:\n%s\nwant:\n%s", got, want)
	}
}
