package expr

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

func randomColumn(t *testing.T, ctx *Context, chunk string) []float64 {
	t.Helper()
	ts := []types.Type{types.TInt32, types.TVarchar}
	col, err := MustBuild(Func("random"), ts).Eval(ctx, types.MustParseChunk(ts, chunk))
	if err != nil {
		t.Fatal(err)
	}
	vals := col.(*types.Vec[float64]).Vals
	for _, v := range vals {
		if v < 0 || v >= 1 {
			t.Fatalf("random() = %v, outside [0, 1)", v)
		}
	}
	return vals
}

// In a batch query random() draws: equal rows get different values.
func TestRandomDrawsInBatch(t *testing.T) {
	v := randomColumn(t, &Context{Strict: true}, "+ 1 a\n+ 1 a\n+ 1 a")
	if v[0] == v[1] && v[1] == v[2] {
		t.Fatalf("three draws all equal %v", v[0])
	}
}

// In a streaming job random() is a function of its row, so a delete
// recomputes exactly the inserted value, and different rows still differ.
func TestRandomStableInStreaming(t *testing.T) {
	ctx := &Context{StableRandom: true}
	ins := randomColumn(t, ctx, "+ 1 a\n+ 2 a\n+ 1 b")
	del := randomColumn(t, ctx, "- 1 b\n- 1 a")
	if del[0] != ins[2] || del[1] != ins[0] {
		t.Fatalf("retraction values %v do not match insertions %v", del, ins)
	}
	if ins[0] == ins[1] || ins[0] == ins[2] {
		t.Fatalf("different rows got equal values %v", ins)
	}
}
