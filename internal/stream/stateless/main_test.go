package stateless

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// Union starts pumps; goleak checks every test waits for them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testActor stream.ActorID = 3

var (
	i64 = types.TInt64
	boo = types.TBool
	str = types.TVarchar
)

func in(i int, t types.Type) expr.Desc { return expr.Input(i, t) }

func lit(d types.Datum, t types.Type) expr.Desc { return expr.Literal(d, t) }

// drain pulls e through stream.Checked until the stop barrier for
// testActor and renders every message.
func drain(t *testing.T, ctx context.Context, e stream.Executor) []string {
	t.Helper()
	var out []string
	for _, msg := range streamtest.PullUntilStop(ctx, t, stream.Checked("test", e), testActor) {
		out = append(out, streamtest.Render(msg, testActor))
	}
	return out
}

func checkOutput(t *testing.T, got, want []string) {
	t.Helper()
	g, w := strings.Join(got, "\n---\n"), strings.Join(want, "\n---\n")
	if g != w {
		t.Fatalf("output:\n%s\n\nwant:\n%s", g, w)
	}
}

// firstOutput builds n over a source of one input message between barrier
// 1 and the stop barrier, and returns what comes out after barrier 1.
func firstOutput(t *testing.T, n *plan.Node, schema []types.Type, in stream.Message) stream.Message {
	t.Helper()
	src := stream.NewMockSource(schema, stream.NewBarrier(1), in, stream.NewStopBarrier(2, testActor))
	e, err := Build(&stream.Env{}, nil, n, []stream.Executor{src})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Next(ctx); err != nil {
		t.Fatal(err)
	}
	msg, err := e.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func chunk(ts []types.Type, text string) stream.Message { return stream.TextChunk(ts, text) }
