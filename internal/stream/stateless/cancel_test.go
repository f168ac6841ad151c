package stateless

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// A values node with many rows emits them chunk by chunk; a downstream
// that cancels after the first chunk gets context.Canceled next.
func TestValuesCancelMidEmit(t *testing.T) {
	const n = 1000
	rows := make([][]expr.Desc, n)
	for i := range rows {
		rows[i] = []expr.Desc{lit(int64(i), i64)}
	}
	env := &stream.Env{Expr: &expr.Context{}, Barriers: inbox(1, 2), ChunkSize: 8}
	e, err := Build(env, nil, valuesNode([]types.Type{i64}, rows...), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streamtest.FirstFullChunk(t, ctx, e, 8)
	cancel()
	if msg, err := e.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v, %v; want context.Canceled", msg, err)
	}
}

// deafInput serves the same chunk up to limit times and never looks at
// ctx, so only the executor above it can notice a cancel.
type deafInput struct {
	chunk  stream.Message
	served int
	limit  int
}

func (d *deafInput) Schema() []types.Type { return []types.Type{i64} }

func (d *deafInput) Next(context.Context) (stream.Message, error) {
	if d.served == d.limit {
		return stream.Message{}, stream.ErrScriptEnd
	}
	d.served++
	return d.chunk, nil
}

// A filter that drops every row loops over input chunks without returning
// anything; it checks ctx on each, so a cancel stops it after at most one
// more input chunk even when its input does not watch ctx.
func TestFilterCancelWhileDropping(t *testing.T) {
	src := &deafInput{chunk: chunk([]types.Type{i64}, "+ 1\n+ 2"), limit: 1000}
	n := &plan.Node{Kind: plan.KindFilter, Filter: &plan.Filter{Cond: expr.Func(">", in(0, i64), lit(int64(5), i64))}}
	e, err := Build(&stream.Env{}, nil, n, []stream.Executor{src})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v; want context.Canceled", err)
	}
	if src.served > 1 {
		t.Fatalf("the filter pulled %d input chunks after the cancel", src.served)
	}
}
