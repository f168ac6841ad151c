package stateless

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

func filterNode(cond expr.Desc) *plan.Node {
	return &plan.Node{Kind: plan.KindFilter, Filter: &plan.Filter{Cond: cond}}
}

func TestFilter(t *testing.T) {
	schema := []types.Type{i64, str}
	gt2 := expr.Func(">", in(0, i64), lit(int64(2), i64))
	cases := []struct {
		name   string
		cond   expr.Desc
		script string
		want   []string
	}{{
		name:   "NULL is false",
		cond:   gt2,
		script: "barrier\n+ 1 a\n+ 3 b\n+ NULL c\n- 5 d\nstop",
		want:   []string{"barrier 1", "+ 1 a D\n+ 3 b\n+ NULL c D\n- 5 d", "barrier 2 stop"},
	}, {
		name:   "update pairs split when one side fails",
		cond:   gt2,
		script: "barrier\nU- 1 a\nU+ 5 a\nU- 6 b\nU+ 0 b\nU- 3 c\nU+ 4 c\nU- 0 d\nU+ 1 d\nstop",
		want:   []string{"barrier 1", "U- 1 a D\n+ 5 a\n- 6 b\nU+ 0 b D\nU- 3 c\nU+ 4 c\nU- 0 d D\nU+ 1 d D", "barrier 2 stop"},
	}, {
		// A pair whose other half an upstream executor already hid is
		// also made plain.
		name:   "pair broken upstream",
		cond:   gt2,
		script: "barrier\nU- 7 a D\nU+ 8 a\nU- 9 b\nU+ 10 b D\nstop",
		want:   []string{"barrier 1", "U- 7 a D\n+ 8 a\n- 9 b\nU+ 10 b D", "barrier 2 stop"},
	}, {
		name:   "fully filtered chunks are skipped",
		cond:   gt2,
		script: "barrier\n+ 1 a\n+ 2 b\nchunk\n+ 9 z D\nbarrier\n+ 3 c\nstop",
		want:   []string{"barrier 1", "barrier 2", "+ 3 c", "barrier 3 stop"},
	}, {
		name:   "where NULL",
		cond:   expr.Desc{Kind: expr.KindLiteral},
		script: "barrier\n+ 3 a\nstop",
		want:   []string{"barrier 1", "barrier 2 stop"},
	}, {
		name:   "row error in the condition filters the row out",
		cond:   expr.Func(">", expr.Func("/", lit(int64(10), i64), in(0, i64)), lit(int64(1), i64)),
		script: "barrier\n+ 0 a\n+ 5 b\n+ 20 c\nstop",
		want:   []string{"barrier 1", "+ 0 a D\n+ 5 b\n+ 20 c D", "barrier 2 stop"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := stream.NewMockSource(schema, streamtest.Script(schema, tc.script, 1, testActor)...)
			e, err := Build(&stream.Env{Expr: &expr.Context{}}, nil, filterNode(tc.cond), []stream.Executor{src})
			if err != nil {
				t.Fatal(err)
			}
			checkOutput(t, drain(t, context.Background(), e), tc.want)
		})
	}
}

// The filter must leave its input chunk exactly as it was (a dispatcher
// may share it) and must not copy columns.
func TestFilterDoesNotTouchInput(t *testing.T) {
	schema := []types.Type{i64, str}
	c := types.MustParseChunk(schema, "U- 1 a\nU+ 5 a\n+ 7 x D\n+ 3 b")
	before := c.StringAll()
	opsBefore := append([]types.Op(nil), c.Ops...)
	msg := firstOutput(t, filterNode(expr.Func(">", in(0, i64), lit(int64(2), i64))), schema, stream.ChunkMsg(c))
	if got, want := msg.Chunk.StringAll(), "U- 1 a D\n+ 5 a\n+ 7 x D\n+ 3 b\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	if c.StringAll() != before {
		t.Fatalf("input changed: %q, was %q", c.StringAll(), before)
	}
	for i, op := range c.Ops {
		if op != opsBefore[i] {
			t.Fatalf("input op %d changed to %s", i, op)
		}
	}
	if msg.Chunk.Cols[0] != c.Cols[0] {
		t.Fatalf("filter copied columns")
	}
}

// When every row passes the chunk keeps "no mask".
func TestFilterAllPassNoMask(t *testing.T) {
	schema := []types.Type{i64}
	msg := firstOutput(t, filterNode(expr.Func(">", in(0, i64), lit(int64(2), i64))), schema, chunk(schema, "+ 5\n+ 6"))
	if msg.Chunk.HasVisibility() || msg.Chunk.Cardinality() != 2 {
		t.Fatalf("got mask=%v rows=%d", msg.Chunk.HasVisibility(), msg.Chunk.Cardinality())
	}
}

// Masks are built a word at a time: check a chunk longer than one word
// against a row-by-row evaluation.
func TestFilterLongChunk(t *testing.T) {
	schema := []types.Type{i64}
	const n = 200
	col := types.MustColumn(i64, n)
	var vis types.Bitmap
	for i := 0; i < n; i++ {
		if i%7 == 0 {
			col.Append(nil)
		} else {
			col.Append(int64(i % 10))
		}
		if i%11 != 0 {
			vis.Set(i)
		}
	}
	c := types.NewChunk([]types.Column{col}, nil)
	c.SetVisibility(vis)
	msg := firstOutput(t, filterNode(expr.Func(">", in(0, i64), lit(int64(4), i64))), schema, stream.ChunkMsg(c))
	for i := 0; i < n; i++ {
		want := i%11 != 0 && i%7 != 0 && i%10 > 4
		if msg.Chunk.Visible(i) != want {
			t.Fatalf("row %d visible=%v, want %v", i, msg.Chunk.Visible(i), want)
		}
	}
}
