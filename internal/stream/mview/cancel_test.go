package mview

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// kvChunks makes chunks of size rows (k, v) for k in [0, n), all op.
func kvChunks(n, size int, op types.Op, v string) []stream.Message {
	ts := kvTable().Types
	b := types.NewBuilder(ts, size)
	var out []stream.Message
	for k := range n {
		if c := b.Append(op, types.Row{int64(k), v}); c != nil {
			out = append(out, stream.ChunkMsg(c))
		}
	}
	if c := b.Take(); c != nil {
		out = append(out, stream.ChunkMsg(c))
	}
	return out
}

// An epoch that overwrites every row of a large view (tiny cache: each
// read goes to the store) emits an update pair per row, two output chunks
// per input chunk. A downstream that cancels after the first output chunk
// gets context.Canceled once the rest of that input chunk's output (at
// most two chunks) is out, not after the epoch.
func TestCancelDuringOverwrite(t *testing.T) {
	const n, size = 4096, 64
	env := &stream.Env{Store: streamtest.OpenStore(t), ActorID: testActor, CacheEntries: 16, ChunkSize: size, CheckInserts: true}
	msgs := append([]stream.Message{stream.NewBarrier(1)}, kvChunks(n, size, types.Insert, "a")...)
	msgs = append(msgs, stream.NewBarrier(2))
	msgs = append(msgs, kvChunks(n, size, types.Insert, "b")...)
	msgs = append(msgs, stream.NewBarrier(3))
	e, err := Build(env, nil, materializeNode(kvTable()), []stream.Executor{stream.NewMockSource(kvTable().Types, msgs...)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		msg, err := e.Next(ctx)
		if err != nil {
			t.Fatalf("epoch 2: %v", err)
		}
		if msg.Barrier != nil && msg.Barrier.Epoch == 2 {
			break
		}
	}
	msg, err := e.Next(ctx)
	if err != nil || msg.Chunk == nil || msg.Chunk.Op(0) != types.UpdateDelete {
		t.Fatalf("want a chunk of updates, got %v, %v", msg, err)
	}
	cancel()
	extra := 0
	for {
		msg, err := e.Next(ctx)
		if errors.Is(err, context.Canceled) {
			break
		}
		if err != nil || msg.Barrier != nil {
			t.Fatalf("after cancel and %d more chunks: %v, %v", extra, msg, err)
		}
		if extra++; extra > 2 {
			t.Fatalf("%d chunks emitted after cancel (an epoch holds %d)", extra, 2*n/size)
		}
	}
}

// One input chunk far larger than the output chunk size queues many output
// chunks; a cancel stops them at the next Next, not after the queue.
func TestCancelDuringOneLargeInputChunk(t *testing.T) {
	const n, size = 4096, 64
	env := &stream.Env{Store: streamtest.OpenStore(t), ActorID: testActor, CacheEntries: 16, ChunkSize: size, CheckInserts: true}
	msgs := append([]stream.Message{stream.NewBarrier(1)}, kvChunks(n, n, types.Insert, "a")...)
	msgs = append(msgs, stream.NewBarrier(2))
	e, err := Build(env, nil, materializeNode(kvTable()), []stream.Executor{stream.NewMockSource(kvTable().Types, msgs...)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		msg, err := e.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Chunk != nil {
			break
		}
	}
	cancel()
	if msg, err := e.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v, %v; want context.Canceled", msg, err)
	}
}
