package agg

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
)

// TestWatermarkClosesGroupsBeforeTheBarrier: a watermark on the first
// group key finishes the dirty groups below it at once: their output is
// the next message, and they leave the epoch's dirty set; the barrier's
// flush then emits only the groups still open, and no later epoch emits a
// closed group again.
func TestWatermarkClosesGroupsBeforeTheBarrier(t *testing.T) {
	in := tsch(i64, i64)
	text := `barrier
+ 1 10
+ 2 20
+ 1 11
watermark 0 2
+ 2 21
+ 3 30
watermark 0 3
barrier
+ 3 31
barrier`
	node := planAgg(in, []int{0}, []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggSum, dec, 1)}, 1)
	a, err := NewAgg(testEnv(streamtest.OpenStore(t), 100), stream.NewMockSource(in, script(in, text, 1)...), node)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if msg, err := a.Next(ctx); err != nil || msg.Barrier == nil {
		t.Fatalf("first message %v, %v; want the first barrier", msg, err)
	}
	msg, err := a.Next(ctx)
	if err != nil || msg.Chunk == nil || msg.Chunk.String() != "+ 1 2 21\n" {
		t.Fatalf("after the first watermark: %v, %v; want the closed group 1", msg, err)
	}
	if n := len(a.groups.dirty); n != 1 || len(a.groups.epochInts) != 1 {
		t.Fatalf("%d dirty groups, %d by key after group 1 closed; want group 2 alone", n, len(a.groups.epochInts))
	}
	want := `+ 2 2 41
+ 3 1 30
watermark 0 3
barrier 2
U- 3 1 30
U+ 3 2 61
barrier 3`
	if got := renderUntil(t, a, 3); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestValueTablesWaitForTheBarrier: an aggregation with a value table
// (max over retractable input) closes its groups at the barrier, where
// the next flush deletes their values with them.
func TestValueTablesWaitForTheBarrier(t *testing.T) {
	st := streamtest.OpenStore(t)
	a := windowAgg(t, st, false, "barrier\n+ 1 10\n+ 2 20\nwatermark 0 2\n+ 2 25\nbarrier", 1)
	want := `barrier 1
+ 1 1 10
+ 2 2 25
watermark 0 2
barrier 2`
	if got := renderUntil(t, a, 2); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
