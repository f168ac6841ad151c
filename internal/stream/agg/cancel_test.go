package agg

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// cancelEnv is a store-backed env with a tiny cache, so group and value
// reads go to the store, and chunks big enough to count in.
func cancelEnv(t *testing.T) *stream.Env {
	st := streamtest.OpenStore(t)
	return &stream.Env{Store: st, ActorID: testActor, CacheEntries: 16, ChunkSize: 64}
}

// rowsChunks turns rows into input chunks of size.
func rowsChunks(schema []types.Type, size int, ops []types.Op, rows []types.Row) []stream.Message {
	b := types.NewBuilder(schema, size)
	var out []stream.Message
	for i, r := range rows {
		if c := b.Append(ops[i], r); c != nil {
			out = append(out, stream.ChunkMsg(c))
		}
	}
	if c := b.Take(); c != nil {
		out = append(out, stream.ChunkMsg(c))
	}
	return out
}

// armOnBarrier passes its input through and arms ctx when the barrier of
// epoch goes by, so the cancel lands inside the flush that barrier starts.
type armOnBarrier struct {
	stream.Executor
	ctx   *streamtest.TripCtx
	epoch uint64
}

func (a *armOnBarrier) Next(ctx context.Context) (stream.Message, error) {
	msg, err := a.Executor.Next(ctx)
	if msg.Barrier != nil && msg.Barrier.Epoch == a.epoch {
		a.ctx.Arm(1) // the entry check of the flush's Next passes
	}
	return msg, err
}

// A flush of many changed groups emits many chunks; a downstream that
// cancels after the first one gets context.Canceled from the very next
// Next, not the rest of the flush and the barrier.
func TestCancelDuringFlush(t *testing.T) {
	const groups = 20_000
	in := tsch(i64, i64)
	env := cancelEnv(t)
	rows := make([]types.Row, groups)
	ops := make([]types.Op, groups)
	for i := range rows {
		rows[i], ops[i] = types.Row{int64(i), int64(i)}, types.Insert
	}
	msgs := append([]stream.Message{stream.NewBarrier(1)}, rowsChunks(in, env.ChunkSize, ops, rows)...)
	msgs = append(msgs, stream.NewBarrier(2))
	calls := []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggMax, i64, 1)}
	a, err := NewAgg(env, stream.NewMockSource(in, msgs...), planAgg(in, []int{0}, calls, 1))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streamtest.FirstFullChunk(t, ctx, a, env.ChunkSize)
	cancel()
	extra := 0
	for {
		msg, err := a.Next(ctx)
		if errors.Is(err, context.Canceled) {
			break
		}
		if err != nil || msg.Barrier != nil {
			t.Fatalf("after cancel and %d more chunks: %v, %v", extra, msg, err)
		}
		if extra++; extra > 1 {
			t.Fatalf("%d chunks emitted after cancel", extra)
		}
	}
}

// An epoch that touches every group but changes no output emits nothing,
// so a single Next walks all the dirty groups; a cancel landing during
// that walk must end it within a bounded number of groups.
func TestCancelDuringQuietFlush(t *testing.T) {
	const groups = 5_000
	in := tsch(i64, i64)
	env := cancelEnv(t)
	var rows []types.Row
	var ops []types.Op
	for i := range groups {
		rows, ops = append(rows, types.Row{int64(i), int64(1)}), append(ops, types.Insert)
	}
	msgs := append([]stream.Message{stream.NewBarrier(1)}, rowsChunks(in, env.ChunkSize, ops, rows)...)
	msgs = append(msgs, stream.NewBarrier(2))
	// Epoch 3: insert and delete a row in every group, a net no-op.
	rows, ops = rows[:0], ops[:0]
	for i := range groups {
		rows = append(rows, types.Row{int64(i), int64(2)}, types.Row{int64(i), int64(2)})
		ops = append(ops, types.Insert, types.Delete)
	}
	msgs = append(msgs, rowsChunks(in, env.ChunkSize, ops, rows)...)
	msgs = append(msgs, stream.NewBarrier(3))
	calls := []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggSum, dec, 1)}
	ctx := streamtest.NewTripCtx()
	src := &armOnBarrier{Executor: stream.NewMockSource(in, msgs...), ctx: ctx, epoch: 3}
	a, err := NewAgg(env, src, planAgg(in, []int{0}, calls, 1))
	if err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := a.Next(ctx)
		if err != nil {
			t.Fatalf("before epoch 3: %v", err)
		}
		if msg.Barrier != nil && msg.Barrier.Epoch == 2 {
			break
		}
	}
	_, err = a.Next(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next during a quiet flush of %d groups: %v, want context.Canceled", groups, err)
	}
	if walked := a.flush.pos; walked > 2*cancelEvery {
		t.Fatalf("the flush walked %d groups after the cancel", walked)
	}
}

// string_agg over one huge group scans its value table during the flush;
// cancelling the consumer mid-scan stops the scan within a bounded number
// of rows.
func TestCancelDuringValueScan(t *testing.T) {
	const n = 20_000
	in := tsch(i64, str)
	env := cancelEnv(t)
	rows := make([]types.Row, n)
	ops := make([]types.Op, n)
	for i := range rows {
		rows[i], ops[i] = types.Row{int64(0), fmt.Sprintf("v%05d", i)}, types.Insert
	}
	msgs := append([]stream.Message{stream.NewBarrier(1)}, rowsChunks(in, env.ChunkSize, ops, rows)...)
	calls := []plan.AggCall{ac(plan.AggStringAgg, str, 1, 1)}
	a, err := NewAgg(env, stream.NewMockSource(in, msgs...), planAgg(in, []int{0}, calls, 1))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if msg, err := a.Next(ctx); err != nil || msg.Barrier == nil {
		t.Fatalf("first message %v, %v", msg, err)
	}
	// Fold every chunk; the script ends before the barrier that would
	// flush, leaving the group's rows in the value table.
	if _, err := a.Next(ctx); !errors.Is(err, stream.ErrScriptEnd) {
		t.Fatalf("folding: %v", err)
	}
	vt := a.calls[0].vt
	seen := 0
	err = vt.scan(ctx, types.Row{int64(0)}, func(types.Row, int64) bool {
		if seen++; seen == 1 {
			cancel()
		}
		return true
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("scan after cancel: %v (saw %d of %d rows)", err, seen, n)
	}
	if seen > cancelEvery {
		t.Fatalf("scan read %d rows after the cancel", seen-1)
	}
}

// One input chunk far larger than the output chunk size (4096 new keys,
// chunks of 64) queues 64 output chunks; a downstream that cancels after
// the first gets context.Canceled from the next Next, not the other 63.
func TestCancelDuringDistinctEmit(t *testing.T) {
	const n = 4096
	in := tsch(i64)
	env := cancelEnv(t)
	rows := make([]types.Row, n)
	ops := make([]types.Op, n)
	for i := range rows {
		rows[i], ops[i] = types.Row{int64(i)}, types.Insert
	}
	msgs := append([]stream.Message{stream.NewBarrier(1)}, rowsChunks(in, n, ops, rows)...)
	d, err := NewDistinct(env, stream.NewMockSource(in, msgs...), planDistinct(in, []int{0}, 1))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streamtest.FirstFullChunk(t, ctx, d, env.ChunkSize)
	cancel()
	if msg, err := d.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v, %v; want context.Canceled", msg, err)
	}
}

// The values new groups wait with are written at the end of the flush
// (pending.go), a million of them in a bulk epoch: a stop during that
// write ends it, rather than waiting for every group.
func TestCancelWhileWritingWaitingValues(t *testing.T) {
	const groups = 4 * cancelEvery
	in := tsch(i64, i64)
	env := cancelEnv(t)
	a, err := NewAgg(env, stream.NewMockSource(in), planAgg(in, []int{0}, []plan.AggCall{ac(plan.AggMax, i64, 1)}, 1))
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	var ops []types.Op
	for i := range groups {
		rows, ops = append(rows, types.Row{int64(i), int64(i)}, types.Row{int64(i), int64(-i)}), append(ops, types.Insert, types.Insert)
	}
	ctx := context.Background()
	for _, m := range rowsChunks(in, env.ChunkSize, ops, rows) {
		if err := a.handleChunk(ctx, m.Chunk); err != nil {
			t.Fatal(err)
		}
	}
	waiting := 0
	for _, g := range a.groups.dirty {
		waiting += g.pend[0].len()
	}
	if waiting != 2*groups {
		t.Fatalf("%d values waiting, want %d", waiting, 2*groups)
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.writeWaiting(stopped, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("writeWaiting after a cancel: %v, want context.Canceled", err)
	}
}
