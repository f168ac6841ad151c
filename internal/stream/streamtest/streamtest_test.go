package streamtest

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// OpenStore's store starts goroutines; goleak checks its cleanup closes it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const actor stream.ActorID = 9

var ii = []types.Type{types.TInt64, types.TInt64}

func renderAll(msgs []stream.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, Render(m, actor))
	}
	return strings.Join(out, "|")
}

func TestScript(t *testing.T) {
	msgs := Script(ii, `
		# comment
		barrier
		+ 1 2
		- 3 4 D
		chunk
		U- 5 6
		U+ 5 7
		barrier
		stop
		+ 8 9`, 4, actor)
	want := "barrier 4|+ 1 2\n- 3 4 D|U- 5 6\nU+ 5 7|barrier 5|barrier 6 stop|+ 8 9"
	if got := renderAll(msgs); got != want {
		t.Fatalf("script:\n%s\nwant:\n%s", got, want)
	}
	if msgs[len(msgs)-2].Barrier.IsStop(actor + 1) {
		t.Fatalf("stop barrier stops another actor")
	}
}

func TestRender(t *testing.T) {
	wm := stream.Message{Watermark: &stream.Watermark{Col: 1, Value: int64(7)}}
	if got := Render(wm, actor); got != "watermark 1 7" {
		t.Fatalf("watermark renders as %q", got)
	}
	if got := Render(stream.Message{}, actor); got != "empty" {
		t.Fatalf("empty message renders as %q", got)
	}
	if got := Render(stream.NewStopBarrier(3, actor), actor+1); got != "barrier 3" {
		t.Fatalf("another actor's stop renders as %q", got)
	}
}

func TestPull(t *testing.T) {
	ctx := context.Background()
	src := stream.NewMockSource(ii, Script(ii, "barrier\n+ 1 1\nbarrier\n+ 2 2\nstop", 1, actor)...)
	if got := renderAll(PullUntilBarrier(ctx, t, src)); got != "barrier 1" {
		t.Fatalf("first pull: %q", got)
	}
	if got := renderAll(PullUntilStop(ctx, t, src, actor)); got != "+ 1 1|barrier 2|+ 2 2|barrier 3 stop" {
		t.Fatalf("pull until stop: %q", got)
	}
}

// fakeTB records a failure instead of ending the test.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = format
	panic(f)
}

func TestPullFailsOnError(t *testing.T) {
	f := &fakeTB{TB: t}
	src := stream.NewMockSource(ii, Script(ii, "barrier\n+ 1 1", 1, actor)...)
	func() {
		defer func() {
			if r := recover(); r != f {
				panic(r)
			}
		}()
		PullUntilStop(context.Background(), f, src, actor)
	}()
	if !strings.HasPrefix(f.failed, "Next after") {
		t.Fatalf("a source that ends before its stop did not fail the test (%q)", f.failed)
	}
}

func TestOpenStore(t *testing.T) {
	s := OpenStore(t)
	env := &stream.Env{Store: s, ActorID: actor}
	st, err := env.OpenTable(plan.Table{ID: 1, Types: ii, PK: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Insert(types.Row{int64(1), int64(2)}); err != nil {
		t.Fatal(err)
	}
	row, ok, err := st.Get(context.Background(), types.Row{int64(1)})
	if err != nil || !ok || row[1] != int64(2) {
		t.Fatalf("Get = %v %v %v", row, ok, err)
	}
}

func TestCycleSource(t *testing.T) {
	ctx := context.Background()
	a := stream.TextChunk(ii, "+ 1 1").Chunk
	b := stream.TextChunk(ii, "+ 2 2").Chunk
	pull := func(s *CycleSource, n int) string {
		var out []string
		for range n {
			msg, err := s.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Render(msg, actor))
		}
		return strings.Join(out, "|")
	}
	s := &CycleSource{Types: ii, Chunks: []*types.Chunk{a, b}, PerEpoch: 3}
	if got, want := pull(s, 9), "barrier 1|+ 1 1|+ 2 2|+ 1 1|barrier 2|+ 2 2|+ 1 1|+ 2 2|barrier 3"; got != want {
		t.Fatalf("cycle:\n%s\nwant:\n%s", got, want)
	}
	if s.Sent != 6 || s.InEpoch != 0 {
		t.Fatalf("sent %d, in epoch %d", s.Sent, s.InEpoch)
	}
	if got, want := pull(&CycleSource{Types: ii, Chunks: []*types.Chunk{a}, PerEpoch: 1, Epoch: 4}, 3), "+ 1 1|barrier 5|+ 1 1"; got != want {
		t.Fatalf("started past epoch 4: %s, want %s", got, want)
	}
	if got, want := pull(&CycleSource{Types: ii, PerEpoch: 2}, 2), "barrier 1|barrier 2"; got != want {
		t.Fatalf("no chunks: %s, want %s", got, want)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Next(cctx); err == nil {
		t.Fatal("Next ignored a cancelled context")
	}
}
