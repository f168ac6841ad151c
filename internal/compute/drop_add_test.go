package compute

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/stream"
)

// TestDropBeforeAddBarrierArrives: a new job is dropped while the barrier
// carrying its Add mutation is still queued at the upstream actor (the
// upstream is slow — the very case immediate drop exists for). When the
// upstream finally applies the Add, it must not start sending to the
// dropped job's channels, or it blocks for ever once they fill and the
// surviving job stalls.
//
// DropJobs must also detach the dispatchers Prepare handed out that are
// still in flight in an Add barrier: an upstream that installs one after
// the drop must not fill channels nobody reads.
func TestDropBeforeAddBarrierArrives(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	h := newHarness(t, Config{ChunkSize: 1, ChannelCapacity: 1})
	h.deploy(t, singletonView(1, kvRows(5), kvTable(1000, 0)))
	adds := h.deploy(t, attachedView(2, 11, 1000, kvTable(2000, 0)))
	if err := h.node.DropJobs(ctx, []uint32{2}); err != nil {
		t.Fatal(err)
	}
	// The Add barrier was injected before the drop; actor 100 only reads
	// its inbox now.
	b := barrier(1)
	b.Mutation = &stream.AddMutation{JobID: 2, Dispatchers: adds}
	h.inject(t, b, 100)
	for epoch := uint64(2); epoch <= 3; epoch++ {
		h.inject(t, barrier(epoch), 100)
	}
	h.waitCollected(t, 3, 100)
}
