package stateless

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/stream"
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

// render prints a message as the expectations spell it: a chunk's rows
// (hidden ones with a trailing D), or "barrier N", or "barrier N stop".
func render(msg stream.Message) string {
	switch {
	case msg.Chunk != nil:
		return strings.TrimRight(msg.Chunk.StringAll(), "\n")
	case msg.Barrier != nil:
		if msg.Barrier.IsStop(testActor) {
			return fmt.Sprintf("barrier %d stop", msg.Barrier.Epoch)
		}
		return fmt.Sprintf("barrier %d", msg.Barrier.Epoch)
	case msg.Watermark != nil:
		return fmt.Sprintf("watermark %d %v", msg.Watermark.Col, msg.Watermark.Value)
	}
	return "empty"
}

// drain pulls e through stream.Checked until the stop barrier for
// testActor and renders every message.
func drain(t *testing.T, ctx context.Context, e stream.Executor) []string {
	t.Helper()
	ce := stream.Checked("test", e)
	var out []string
	for n := 0; n < 10000; n++ {
		msg, err := ce.Next(ctx)
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		out = append(out, render(msg))
		if msg.Barrier != nil && msg.Barrier.IsStop(testActor) {
			return out
		}
	}
	t.Fatalf("no stop barrier after 10000 messages")
	return nil
}

func checkOutput(t *testing.T, got, want []string) {
	t.Helper()
	g, w := strings.Join(got, "\n---\n"), strings.Join(want, "\n---\n")
	if g != w {
		t.Fatalf("output:\n%s\n\nwant:\n%s", g, w)
	}
}

func chunk(ts []types.Type, text string) stream.Message { return stream.TextChunk(ts, text) }
