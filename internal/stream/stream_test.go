package stream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var ii = []types.Type{types.TInt64, types.TInt64}

func TestDetachReleasesBlockedSender(t *testing.T) {
	out, _ := NewChannel(1, 2, 1)
	ctx := context.Background()
	if err := out.Send(ctx, NewBarrier(1)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- out.Send(ctx, NewBarrier(2)) }() // blocks: channel full
	select {
	case err := <-done:
		t.Fatalf("send on a full channel returned early: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	out.Detach()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("detached send returned %v, want nil", err)
		}
	case <-time.After(time.Second):
		t.Fatal("detach did not release the blocked sender")
	}
	if err := out.Send(ctx, NewBarrier(3)); err != nil || out.Len() != 1 {
		t.Fatalf("send after detach: err=%v len=%d", err, out.Len())
	}
}

func TestCloseWithoutNoticeIsAFault(t *testing.T) {
	out, in := NewChannel(1, 2, 4)
	m := NewMerge(ii, []*Input{in})
	out.Close()
	_, err := m.Next(context.Background())
	if !errors.Is(err, ErrUpstreamClosed) {
		t.Fatalf("got %v, want ErrUpstreamClosed", err)
	}
}

func TestMergeAlignsBarriers(t *testing.T) {
	ctx := context.Background()
	o1, i1 := NewChannel(1, 9, 8)
	o2, i2 := NewChannel(2, 9, 8)
	m := NewMerge(ii, []*Input{i1, i2})
	send := func(o *Output, msg Message) {
		if err := o.Send(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	send(o1, NewBarrier(1))
	send(o1, TextChunk(ii, "+ 1 1"))
	send(o2, TextChunk(ii, "+ 2 2"))
	send(o2, NewBarrier(1))
	var got []string
	for len(got) < 3 {
		msg, err := m.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msg.String())
	}
	// Input 1's chunk is after its barrier, so it must come after the
	// aligned barrier; input 2's chunk comes before it.
	want := []string{"chunk:\n+ 2 2\n", "barrier 1", "chunk:\n+ 1 1\n"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("message %d = %q, want %q (all: %q)", i, got[i], want[i], got)
		}
	}
}

func TestAlignedReportsInputError(t *testing.T) {
	g, ctx := task.NewGroup(context.Background())
	defer func() { g.Cancel(); _ = g.Wait() }()
	a := NewAligned(ctx, g, []Executor{
		NewMockSource(ii, NewBarrier(1)),
		NewMockSource(ii, NewBarrier(1), TextChunk(ii, "+ 1 2")),
	}, nil)
	if _, msg, err := a.Next(ctx); err != nil || msg.Barrier == nil {
		t.Fatalf("want barrier, got %v %v", msg, err)
	}
	for {
		_, _, err := a.Next(ctx)
		if errors.Is(err, ErrScriptEnd) {
			return
		}
		if err != nil {
			t.Fatalf("unexpected %v", err)
		}
	}
}

func TestHashDispatcherRoutesAndSplitsUpdates(t *testing.T) {
	ctx := context.Background()
	o1, i1 := NewChannel(1, 2, 8)
	o2, i2 := NewChannel(1, 3, 8)
	owner := EvenVNodeOwners(2)
	d, err := NewHashDispatcher([]*Output{o1, o2}, []int{0}, owner)
	if err != nil {
		t.Fatal(err)
	}
	// Find two keys that land on different actors.
	k1, k2 := int64(-1), int64(-1)
	for k := int64(0); k < 100 && (k1 < 0 || k2 < 0); k++ {
		v := codec.VNodeOf(codec.HashRow(types.Row{k}, []types.Type{types.TInt64}))
		if owner[v] == 0 && k1 < 0 {
			k1 = k
		} else if owner[v] == 1 && k2 < 0 {
			k2 = k
		}
	}
	c := types.MustParseChunk(ii, "U- "+itoa(k1)+" 1\nU+ "+itoa(k2)+" 1\n+ "+itoa(k1)+" 7")
	if err := d.Dispatch(ctx, ChunkMsg(c)); err != nil {
		t.Fatal(err)
	}
	got1 := (<-i1.ch).Chunk.String()
	got2 := (<-i2.ch).Chunk.String()
	if want := "- " + itoa(k1) + " 1\n+ " + itoa(k1) + " 7\n"; got1 != want {
		t.Fatalf("actor 2 got %q want %q", got1, want)
	}
	if want := "+ " + itoa(k2) + " 1\n"; got2 != want {
		t.Fatalf("actor 3 got %q want %q", got2, want)
	}
	if c.Ops[0] != types.UpdateDelete {
		t.Fatal("dispatcher mutated its input's ops")
	}
}

func itoa(k int64) string { return types.FormatDatum(k, types.TInt64) }

type sinkFunc func(ActorID, uint64)

func (f sinkFunc) Collect(_ context.Context, a ActorID, e uint64) error { f(a, e); return nil }

// blockingSource emits a barrier, then chunks forever, checking ctx per
// chunk as executors must.
type blockingSource struct{ n int }

func (b *blockingSource) Next(ctx context.Context) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, err
	}
	b.n++
	if b.n == 1 {
		return NewBarrier(1), nil
	}
	return TextChunk(ii, "+ 1 1"), nil
}
func (b *blockingSource) Schema() []types.Type { return ii }

func TestActorStopWhileBlockedOnFullOutput(t *testing.T) {
	out, in := NewChannel(1, 2, 2)
	collected := make(chan uint64, 4)
	a := NewActor(1, 1, &blockingSource{}, []Dispatcher{&SimpleDispatcher{Out: out}},
		sinkFunc(func(_ ActorID, e uint64) { collected <- e }), NewThrottle())
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	<-collected
	waitFor(t, "the output to fill", func() bool { return out.Len() == 2 }) // now blocked sending
	start := time.Now()
	a.HandleControl(ControlStop{})
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stopped actor returned %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("actor did not stop")
	}
	// Generous for a loaded 2-core -race run; a stop that waited for the
	// blocked send (or a barrier) would never return at all.
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("stop took %v", d)
	}
	_ = in
}

func TestDetachLetsProducerContinue(t *testing.T) {
	outA, _ := NewChannel(1, 2, 1) // to a job being dropped: never read
	outB, inB := NewChannel(1, 3, 64)
	a := NewActor(1, 1, &blockingSource{}, []Dispatcher{&SimpleDispatcher{Out: outA}, &SimpleDispatcher{Out: outB}},
		sinkFunc(func(ActorID, uint64) {}), NewThrottle())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	time.Sleep(10 * time.Millisecond) // producer now blocked on outA
	before := len(inB.ch)
	a.HandleControl(ControlDetach{Downstream: map[ActorID]bool{2: true}})
	deadline := time.After(time.Second)
	for len(inB.ch) < before+5 {
		select {
		case <-deadline:
			t.Fatalf("producer still stuck after detach (%d buffered)", len(inB.ch))
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestThrottlePauseAndResume(t *testing.T) {
	th := NewThrottle()
	th.SetPaused(true)
	done := make(chan error, 1)
	go func() { done <- th.Wait(context.Background(), 10) }()
	select {
	case <-done:
		t.Fatal("paused throttle let rows through")
	case <-time.After(20 * time.Millisecond):
	}
	th.SetPaused(false)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("resume did not wake the waiter")
	}
	th.SetRateLimit(0) // 0 pauses too
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := th.Wait(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("rate 0 should pause, got %v", err)
	}
}

func TestCheckedRejectsDataBeforeBarrier(t *testing.T) {
	c := Checked("x", NewMockSource(ii, TextChunk(ii, "+ 1 2")))
	if _, err := c.Next(context.Background()); err == nil {
		t.Fatal("chunk before first barrier accepted")
	}
	c = Checked("x", NewMockSource(ii, NewBarrier(2), NewBarrier(2)))
	_, _ = c.Next(context.Background())
	if _, err := c.Next(context.Background()); err == nil {
		t.Fatal("non-increasing epoch accepted")
	}
}

// A new rate limit holds from the first row: 200 rows at 1000 rows/s take
// about 0.2 s, not the instant a full bucket would allow. (A lower bound:
// a loaded machine can only make it slower.)
func TestThrottleLimitHoldsFromTheFirstRow(t *testing.T) {
	th := NewThrottle()
	th.SetRateLimit(1000)
	start := time.Now()
	if err := th.Wait(context.Background(), 200); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Fatalf("200 rows at 1000 rows/s passed in %v", took)
	}
}
