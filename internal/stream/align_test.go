package stream

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/task"
)

// TestAlignedHoldsDataBehindAnEarlyBarrier is the join/union side of
// barrier alignment: input 0 delivers barrier 1 and then a lot of data of
// epoch 2 at once, while input 1 is silent for a long time. Until input 1's
// barrier arrives, the consumer gets nothing at all — none of input 0's
// epoch-2 data; then it gets input 1's epoch-1 data, the barrier once, and
// only then input 0's epoch-2 data.
func TestAlignedHoldsDataBehindAnEarlyBarrier(t *testing.T) {
	g, ctx := task.NewGroup(context.Background())
	defer func() { g.Cancel(); _ = g.Wait() }()
	early := NewMockSource(ii, NewBarrier(1))
	for range 50 {
		early.Push(TextChunk(ii, "+ 1 1"))
	}
	early.Push(NewBarrier(2))
	late := &gatedSource{gate: make(chan struct{}), MockSource: NewMockSource(ii,
		TextChunk(ii, "+ 2 2"), NewBarrier(1), NewBarrier(2))}
	a := NewAligned(ctx, g, []Executor{early, late}, nil)

	type result struct {
		in  int
		msg Message
		err error
	}
	next := make(chan result, 1)
	pull := func() {
		i, msg, err := a.Next(ctx)
		next <- result{i, msg, err}
	}
	go pull()
	// Input 0's barrier and chunks are ready; input 1 has nothing. A
	// correct aligner returns nothing however long we wait.
	settle()
	select {
	case r := <-next:
		t.Fatalf("got %v from input %d before input 1's barrier", r.msg, r.in)
	default:
	}
	close(late.gate)
	want := []struct {
		in   int
		text string
	}{{1, "chunk:\n+ 2 2\n"}, {-1, "barrier 1"}}
	for range 50 {
		want = append(want, struct {
			in   int
			text string
		}{0, "chunk:\n+ 1 1\n"})
	}
	want = append(want, struct {
		in   int
		text string
	}{-1, "barrier 2"})
	for k, w := range want {
		r := <-next
		if r.err != nil {
			t.Fatalf("message %d: %v", k, r.err)
		}
		if r.in != w.in || r.msg.String() != w.text {
			t.Fatalf("message %d = input %d %q, want input %d %q", k, r.in, r.msg.String(), w.in, w.text)
		}
		if k+1 < len(want) {
			go pull()
		}
	}
}

// TestMergeHoldsDataBehindAnEarlyBarrier: the same for a merge over
// exchange channels, with the early input's channel full of epoch-2 data.
func TestMergeHoldsDataBehindAnEarlyBarrier(t *testing.T) {
	ctx := context.Background()
	o1, i1 := NewChannel(1, 9, 64)
	o2, i2 := NewChannel(2, 9, 64)
	m := NewMerge(ii, []*Input{i1, i2})
	mustSend := func(o *Output, msg Message) {
		if err := o.Send(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	mustSend(o1, NewBarrier(1))
	for range 20 {
		mustSend(o1, TextChunk(ii, "+ 1 1"))
	}
	next := make(chan Message, 1)
	mctx, cancel := context.WithCancel(ctx)
	go func() {
		msg, err := m.Next(mctx)
		if err != nil {
			msg = Message{}
		}
		next <- msg
	}()
	settle()
	select {
	case msg := <-next:
		t.Fatalf("merge returned %v before the second input's barrier", msg)
	default:
	}
	cancel()
	if msg := <-next; msg.Chunk != nil || msg.Barrier != nil {
		t.Fatalf("cancelled merge returned %v", msg)
	}
	mustSend(o2, NewBarrier(1))
	if msg, err := m.Next(ctx); err != nil || msg.Barrier == nil || msg.Barrier.Epoch != 1 {
		t.Fatalf("want barrier 1, got %v %v", msg, err)
	}
	if msg, err := m.Next(ctx); err != nil || msg.Chunk == nil {
		t.Fatalf("want input 1's epoch-2 chunk, got %v %v", msg, err)
	}
}
