package stateless

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestFilterProperty filters random chunks (plain rows and update pairs,
// some hidden, some NULL) and checks that the visible output is exactly the
// visible input rows that pass, with the same normalized ops in the same
// order, and that every visible update half has its partner right next to it.
func TestFilterProperty(t *testing.T) {
	schema := []types.Type{i64}
	cond := expr.Func(">", in(0, i64), lit(int64(2), i64))
	rapid.Check(t, func(t *rapid.T) {
		var lines []string
		var want []string
		row := func(op types.Op) {
			v := rapid.IntRange(-1, 5).Draw(t, "v")
			tok := fmt.Sprint(v)
			if v < 0 {
				tok = "NULL"
			}
			hidden := rapid.IntRange(0, 4).Draw(t, "hidden") == 0
			line := op.String() + " " + tok
			if hidden {
				line += " D"
			} else if v > 2 {
				want = append(want, op.Normalize().String()+" "+tok)
			}
			lines = append(lines, line)
		}
		for n := rapid.IntRange(1, 150).Draw(t, "rows"); n > 0; n-- {
			if rapid.Bool().Draw(t, "pair") {
				row(types.UpdateDelete)
				row(types.UpdateInsert)
			} else {
				row(rapid.SampledFrom([]types.Op{types.Insert, types.Delete}).Draw(t, "op"))
			}
		}
		src := stream.NewMockSource(schema, stream.NewBarrier(1), chunk(schema, strings.Join(lines, "\n")), stream.NewStopBarrier(2, testActor))
		f, err := Build(&stream.Env{}, nil, filterNode(cond), []stream.Executor{src})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var ops []types.Op
		var idx []int // capacity index of each visible output row
		for _, m := range streamtest.PullUntilStop(context.Background(), t, f, testActor) {
			if m.Chunk == nil {
				continue
			}
			for _, i := range m.Chunk.VisibleIndices() {
				ops = append(ops, m.Chunk.Op(i))
				idx = append(idx, i)
				got = append(got, m.Chunk.Op(i).Normalize().String()+" "+types.FormatToken(m.Chunk.Cols[0].Get(i), i64))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
		for k, op := range ops {
			// Halves must be visible neighbours in the chunk itself, not
			// just in visible order, or two different pairs could fuse.
			if op == types.UpdateDelete && (k+1 >= len(ops) || ops[k+1] != types.UpdateInsert || idx[k+1] != idx[k]+1) ||
				op == types.UpdateInsert && (k == 0 || ops[k-1] != types.UpdateDelete || idx[k-1] != idx[k]-1) {
				t.Fatalf("unpaired %s at visible row %d: %v", op, k, ops)
			}
		}
	})
}
