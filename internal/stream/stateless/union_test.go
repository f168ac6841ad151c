package stateless

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

func unionNode() *plan.Node { return &plan.Node{Kind: plan.KindUnion} }

// chanSource is an input the test feeds message by message, so it decides
// the order in which the union's inputs deliver.
type chanSource struct {
	schema []types.Type
	ch     chan stream.Message
}

func (s *chanSource) Next(ctx context.Context) (stream.Message, error) {
	select {
	case m := <-s.ch:
		return m, nil
	case <-ctx.Done():
		return stream.Message{}, ctx.Err()
	}
}

func (s *chanSource) Schema() []types.Type { return s.schema }

func newTestGroup(t *testing.T) (*task.Group, context.Context) {
	g, ctx := task.NewGroup(context.Background())
	t.Cleanup(func() {
		g.Cancel()
		if err := g.Wait(); err != nil {
			t.Errorf("group: %v", err)
		}
	})
	return g, ctx
}

// feedItem is one message for one input.
type feedItem struct {
	input int
	msg   stream.Message
}

// unionScript returns, per input, barrier 1, then for each later epoch a
// data chunk "+ input epoch k" (k rows numbered by input and epoch) and the
// barrier, the last barrier stopping testActor. It also returns the rows
// each epoch must deliver, sorted.
func unionScript(nInputs, nEpochs int) ([][]stream.Message, map[uint64][]string) {
	schema := []types.Type{i64, i64, i64}
	scripts := make([][]stream.Message, nInputs)
	want := map[uint64][]string{}
	for i := range scripts {
		scripts[i] = append(scripts[i], stream.NewBarrier(1))
		for e := uint64(2); e <= uint64(nEpochs); e++ {
			var lines []string
			for k := 0; k <= i; k++ { // input i sends i+1 rows per epoch
				line := fmt.Sprintf("+ %d %d %d", i, e, k)
				lines = append(lines, line)
				want[e] = append(want[e], line)
			}
			scripts[i] = append(scripts[i], chunk(schema, strings.Join(lines, "\n")))
			b := stream.NewBarrier(e)
			if e == uint64(nEpochs) {
				b = stream.NewStopBarrier(e, testActor)
			}
			scripts[i] = append(scripts[i], b)
		}
	}
	for e := range want {
		slices.Sort(want[e])
	}
	return scripts, want
}

// interleave merges the scripts in a random order that keeps each input's
// own order.
func interleave(r *rand.Rand, scripts [][]stream.Message) []feedItem {
	pos := make([]int, len(scripts))
	var out []feedItem
	for {
		var live []int
		for i, s := range scripts {
			if pos[i] < len(s) {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			return out
		}
		i := live[r.IntN(len(live))]
		out = append(out, feedItem{i, scripts[i][pos[i]]})
		pos[i]++
	}
}

// TestUnionAlignsBarriers feeds three inputs in many different orders (one
// input running epochs ahead of the others, barriers arriving in any order)
// and checks that each barrier comes out once, after exactly the data of
// its epoch from every input.
func TestUnionAlignsBarriers(t *testing.T) {
	const nInputs, nEpochs = 3, 5
	for seed := uint64(0); seed < 20; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			scripts, want := unionScript(nInputs, nEpochs)
			order := interleave(rand.New(rand.NewPCG(seed, 7)), scripts)
			srcs := make([]*chanSource, nInputs)
			inputs := make([]stream.Executor, nInputs)
			for i := range srcs {
				// Buffered for the whole script: the feeder never blocks,
				// so the inputs deliver in exactly the chosen order.
				srcs[i] = &chanSource{schema: []types.Type{i64, i64, i64}, ch: make(chan stream.Message, len(scripts[i]))}
				inputs[i] = srcs[i]
			}
			for _, it := range order {
				srcs[it.input].ch <- it.msg
			}
			g, ctx := newTestGroup(t)
			u, err := Build(&stream.Env{}, g, unionNode(), inputs)
			if err != nil {
				t.Fatal(err)
			}
			checkEpochs(t, drain(t, ctx, u), want, nEpochs)
		})
	}
}

// checkEpochs splits the rendered output at barriers and compares each
// epoch's rows, as a sorted multiset, with want.
func checkEpochs(t *testing.T, out []string, want map[uint64][]string, nEpochs int) {
	t.Helper()
	var rows []string
	epoch := uint64(0)
	for _, m := range out {
		if !strings.HasPrefix(m, "barrier") {
			rows = append(rows, strings.Split(m, "\n")...)
			continue
		}
		epoch++
		wantB := fmt.Sprintf("barrier %d", epoch)
		if epoch == uint64(nEpochs) {
			wantB += " stop"
		}
		if m != wantB {
			t.Fatalf("got %q, want %q (output %q)", m, wantB, out)
		}
		slices.Sort(rows)
		if !slices.Equal(rows, want[epoch]) {
			t.Fatalf("epoch %d rows %q, want %q", epoch, rows, want[epoch])
		}
		rows = nil
	}
	if epoch != uint64(nEpochs) {
		t.Fatalf("saw %d barriers, want %d", epoch, nEpochs)
	}
}

// A single-input union is a pass-through.
func TestUnionOneInput(t *testing.T) {
	schema := []types.Type{i64}
	src := stream.NewMockSource(schema, stream.NewBarrier(1), chunk(schema, "+ 1\n- 2"), stream.NewStopBarrier(2, testActor))
	g, ctx := newTestGroup(t)
	u, err := Build(&stream.Env{}, g, unionNode(), []stream.Executor{src})
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, drain(t, ctx, u), []string{"barrier 1", "+ 1\n- 2", "barrier 2 stop"})
}

// The union's watermark is the least of its inputs' and advances only
// once every input has one.
func TestUnionWatermarks(t *testing.T) {
	schema := []types.Type{i64}
	wm := func(v int64) stream.Message {
		return stream.Message{Watermark: &stream.Watermark{Col: 0, Value: v}}
	}
	a := &chanSource{schema: schema, ch: make(chan stream.Message, 8)}
	b := &chanSource{schema: schema, ch: make(chan stream.Message, 8)}
	g, ctx := newTestGroup(t)
	u, err := Build(&stream.Env{}, g, unionNode(), []stream.Executor{a, b})
	if err != nil {
		t.Fatal(err)
	}
	next := func() string {
		t.Helper()
		msg, err := u.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return streamtest.Render(msg, testActor)
	}
	a.ch <- stream.NewBarrier(1)
	b.ch <- stream.NewBarrier(1)
	if got := next(); got != "barrier 1" {
		t.Fatalf("got %q", got)
	}
	// Each step feeds one input, so the result does not depend on which
	// pump the union reads first.
	a.ch <- wm(5)
	b.ch <- wm(7)
	if got := next(); got != "watermark 0 5" {
		t.Fatalf("got %q, want watermark 0 5", got)
	}
	a.ch <- wm(9)
	if got := next(); got != "watermark 0 7" {
		t.Fatalf("got %q, want watermark 0 7", got)
	}
	b.ch <- wm(20)
	if got := next(); got != "watermark 0 9" {
		t.Fatalf("got %q, want watermark 0 9", got)
	}
	a.ch <- stream.NewStopBarrier(2, testActor)
	b.ch <- stream.NewStopBarrier(2, testActor)
	if got := next(); got != "barrier 2 stop" {
		t.Fatalf("got %q", got)
	}
}

// An input's failure reaches the union's caller, and a cancelled context
// ends a blocked Next.
func TestUnionInputErrorAndCancel(t *testing.T) {
	schema := []types.Type{i64}
	g, ctx := newTestGroup(t)
	ended := stream.NewMockSource(schema, stream.NewBarrier(1)) // then ErrScriptEnd
	idle := &chanSource{schema: schema, ch: make(chan stream.Message, 1)}
	idle.ch <- stream.NewBarrier(1)
	u, err := Build(&stream.Env{}, g, unionNode(), []stream.Executor{ended, idle})
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := u.Next(ctx); err != nil || msg.Barrier == nil {
		t.Fatalf("first message %v, %v", msg, err)
	}
	if _, err := u.Next(ctx); !errors.Is(err, stream.ErrScriptEnd) {
		t.Fatalf("Next = %v, want ErrScriptEnd", err)
	}

	g2, ctx2 := newTestGroup(t)
	blocked := &chanSource{schema: schema, ch: make(chan stream.Message)}
	u2, err := Build(&stream.Env{}, g2, unionNode(), []stream.Executor{blocked})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx2)
	cancel()
	if _, err := u2.Next(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next = %v, want context.Canceled", err)
	}
}
