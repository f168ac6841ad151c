package agg

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
)

// renderUntil pulls e until the barrier of epoch, rendering every message.
func renderUntil(t *testing.T, e stream.Executor, epoch uint64) string {
	t.Helper()
	return streamtest.RenderUntilEpoch(t, e, epoch, testActor)
}

// windowAgg is count(*), max(v) GROUP BY k (k carries watermarks).
func windowAgg(t *testing.T, st *storage.Store, onClose bool, text string, first uint64) *Agg {
	t.Helper()
	in := tsch(i64, i64)
	node := planAgg(in, []int{0}, []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggMax, i64, 1)}, 1)
	node.EmitOnWindowClose = onClose
	a, err := NewAgg(testEnv(st, 100), stream.NewMockSource(in, script(in, text, first)...), node)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func keys(t *testing.T, st *storage.Store, ids ...uint32) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		k, err := st.TableKeyCount(id)
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}

const windowScript = `barrier
+ 1 10
+ 2 20
watermark 0 2
barrier
+ 2 25
+ 3 1
watermark 0 4
barrier
barrier`

// TestAggWatermarkCleans: the watermark on the group key passes on after
// the epoch's changes, and the groups below it are deleted from every
// state table at the next barrier (value rows written fresh, once their
// epoch has committed).
func TestAggWatermarkCleans(t *testing.T) {
	st := streamtest.OpenStore(t)
	a := windowAgg(t, st, false, windowScript+"\nbarrier", 1)
	want := `barrier 1
+ 1 1 10
+ 2 1 20
watermark 0 2
barrier 2
U- 2 1 20
U+ 2 2 25
+ 3 1 1
watermark 0 4
barrier 3
barrier 4`
	if got := renderUntil(t, a, 4); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := st.Commit(context.Background(), 4, nil); err != nil {
		t.Fatal(err)
	}
	renderUntil(t, a, 5)
	if err := st.Commit(context.Background(), 5, nil); err != nil {
		t.Fatal(err)
	}
	if n := keys(t, st, 1, 2); n != 0 {
		t.Fatalf("%d state keys left below the watermark", n)
	}
}

// TestAggDropsGroupsClosedAtTheirFlush: a group the watermark closes by
// the barrier that flushes its last change is deleted at that flush, and
// one made in that same epoch is never stored; groups the epoch did not
// touch go at the next barrier, by the scan below the watermark.
func TestAggDropsGroupsClosedAtTheirFlush(t *testing.T) {
	st := streamtest.OpenStore(t)
	in := tsch(i64, i64)
	node := planAgg(in, []int{0}, []plan.AggCall{ac(plan.AggCountStar, i64)}, 1)
	text := `barrier
+ 1 10
+ 2 20
barrier
+ 2 5
+ 3 7
watermark 0 3
barrier
+ 4 1
watermark 0 5
barrier
barrier`
	a, err := NewAgg(testEnv(st, 100), stream.NewMockSource(in, script(in, text, 1)...), node)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`barrier 1`, `+ 1 1
+ 2 1
barrier 2`, `U- 2 1
U+ 2 2
+ 3 1
watermark 0 3
barrier 3`, `+ 4 1
watermark 0 5
barrier 4`, `barrier 5`}
	// Stored groups after each epoch commits: 2 goes at its flush, 1 at
	// the next barrier, 4 is never stored, 3 goes at barrier 5.
	stored := []int{0, 2, 2, 1, 0}
	for e := range want {
		if got := renderUntil(t, a, uint64(e+1)); got != want[e] {
			t.Fatalf("epoch %d: got:\n%s\nwant:\n%s", e+1, got, want[e])
		}
		if err := st.Commit(context.Background(), uint64(e+1), nil); err != nil {
			t.Fatal(err)
		}
		if n := keys(t, st, 1); n != stored[e] {
			t.Errorf("after epoch %d: %d groups stored, want %d", e+1, n, stored[e])
		}
	}
}

// TestAggKeepsNullKeyGroupPastWatermark: a group whose first key is NULL
// is not below any watermark, so it is neither dropped at its flush nor
// made again by its next row: it updates.
func TestAggKeepsNullKeyGroupPastWatermark(t *testing.T) {
	st := streamtest.OpenStore(t)
	in := tsch(i64, i64)
	node := planAgg(in, []int{0}, []plan.AggCall{ac(plan.AggCountStar, i64)}, 1)
	text := `barrier
+ NULL 1
watermark 0 3
barrier
+ NULL 2
barrier`
	a, err := NewAgg(testEnv(st, 100), stream.NewMockSource(in, script(in, text, 1)...), node)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"barrier 1", "+ NULL 1\nwatermark 0 3\nbarrier 2", "U- NULL 1\nU+ NULL 2\nbarrier 3"}
	for e := range want {
		if got := renderUntil(t, a, uint64(e+1)); got != want[e] {
			t.Errorf("epoch %d: got:\n%s\nwant:\n%s", e+1, got, want[e])
		}
		if err := st.Commit(context.Background(), uint64(e+1), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAggEmitOnWindowClose: each group is emitted once, as an insert,
// when the watermark passes it, and a rebuilt actor that sees the same
// watermark again does not emit it twice.
func TestAggEmitOnWindowClose(t *testing.T) {
	st := streamtest.OpenStore(t)
	a := windowAgg(t, st, true, windowScript, 1)
	want := `barrier 1
+ 1 1 10
watermark 0 2
barrier 2
+ 2 2 25
+ 3 1 1
watermark 0 4
barrier 3`
	if got := renderUntil(t, a, 3); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	// Epoch 2 commits; epoch 3 is lost. The rebuilt actor's source sends
	// the committed watermark again, as a watermark filter does.
	if err := st.Commit(context.Background(), 2, nil); err != nil {
		t.Fatal(err)
	}
	st.AbortUncommitted()
	a = windowAgg(t, st, true, "barrier\nwatermark 0 2\n+ 2 1\nwatermark 0 3\nbarrier\nbarrier", 3)
	want = `barrier 3
+ 2 2 20
watermark 0 3
barrier 4`
	if got := renderUntil(t, a, 4); got != want {
		t.Fatalf("after recovery:\n%s\nwant:\n%s", got, want)
	}
}

// TestAggEmitOnWindowCloseSecondKey: emitting on window close, a
// watermark on a later group key is not passed on: the groups it would
// bound go out only when the first key closes them.
func TestAggEmitOnWindowCloseSecondKey(t *testing.T) {
	st := streamtest.OpenStore(t)
	in := tsch(i64, i64)
	node := planAgg(in, []int{0, 1}, []plan.AggCall{ac(plan.AggCountStar, i64)}, 1)
	node.EmitOnWindowClose = true
	text := "barrier\n+ 10 1030\nwatermark 0 10\nwatermark 1 1045\nbarrier\nwatermark 0 11\nwatermark 1 1100\nbarrier"
	a, err := NewAgg(testEnv(st, 100), stream.NewMockSource(in, script(in, text, 1)...), node)
	if err != nil {
		t.Fatal(err)
	}
	want := `barrier 1
watermark 0 10
barrier 2
+ 10 1030 1
watermark 0 11
barrier 3`
	if got := renderUntil(t, a, 3); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
