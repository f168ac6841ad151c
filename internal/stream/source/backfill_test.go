package source

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// seedUpstream writes rows k = 0..n-1 and commits them at epoch 1.
func seedUpstream(t *testing.T, h *bfHarness, n int) {
	for k := range n {
		h.write(types.Insert, types.Row{int64(k), int64(k % 3), "s"})
	}
	h.epoch = 1
	if err := h.upTable.Seal(1); err != nil {
		t.Fatal(err)
	}
	commit(t, h.store, 1)
	h.modelC = maps(h.model)
}

func TestBackfillPauseStopsScanNotBarriers(t *testing.T) {
	h := newBFHarness(t, bfLayouts[0], []int{0, 1, 2}, 3)
	seedUpstream(t, h, 20)
	h.throttle.SetPaused(true)
	h.start()
	defer h.stop()
	for i := range 3 {
		ins, del := types.Row{int64(100 + i), int64(1), "new"}, h.model[h.pkText(types.Row{int64(5 - i)})]
		h.write(types.Insert, ins)
		h.write(types.Delete, del)
		bld := types.NewBuilder(bfTypes, 4)
		bld.Append(types.Insert, ins)
		bld.Append(types.Delete, del)
		h.in.ch <- stream.ChunkMsg(bld.Take())
		h.sealAndBarrier(true)
		h.pullThroughBarrier(true) // would hang if the pause held barriers
	}
	if scanned, done := h.bf.Progress(); scanned != 0 || done || len(h.out) != 0 {
		t.Fatalf("paused backfill scanned %d (done %v), output %v", scanned, done, h.out)
	}
	h.throttle.SetPaused(false)
	for range 100 {
		if _, done := h.bf.Progress(); done {
			break
		}
		h.sealAndBarrier(true)
		h.pullThroughBarrier(true)
	}
	scanned, done := h.bf.Progress()
	if !done || scanned != int64(len(h.model)) {
		t.Fatalf("after resume: scanned %d of %d, done %v", scanned, len(h.model), done)
	}
	h.checkOutput()
}

// TestBackfillCancelWhileBlocked: blocked waiting for the commit of its
// epoch, or for throttle tokens, Next returns promptly on cancellation.
func TestBackfillCancelWhileBlocked(t *testing.T) {
	for _, paused := range []bool{false, true} {
		h := newBFHarness(t, bfLayouts[0], []int{0, 1, 2}, 2)
		seedUpstream(t, h, 10)
		h.throttle.SetPaused(paused)
		h.start() // commits the first epoch: with a pause, the scan waits for tokens
		if !paused {
			h.sealAndBarrier(true)
			h.pullThroughBarrier(false) // not committed: the scan waits for it
		}
		expectCancelUnblocks(t, h.gctx, h.bf, fmt.Sprintf("paused=%v", paused))
		h.stop()
	}
}

// TestBackfillEmptyTableForwardsEverything: with nothing to scan the
// backfill is done at its first committed epoch and then passes every
// change on, projected.
func TestBackfillEmptyTableForwardsEverything(t *testing.T) {
	h := newBFHarness(t, bfLayouts[1], []int{2, 0}, 4)
	seedUpstream(t, h, 0)
	h.start()
	defer h.stop()
	h.sealAndBarrier(true)
	h.pullThroughBarrier(true)
	if _, done := h.bf.Progress(); !done {
		t.Fatal("backfill of an empty table not done")
	}
	h.in.ch <- stream.ChunkMsg(types.MustParseChunk(bfTypes, "+ 1 2 'a'"))
	m, err := h.bf.Next(h.gctx)
	if err != nil {
		t.Fatal(err)
	}
	expectText(t, m, "chunk:\n+ a 1")
}

func TestBackfillBuildErrors(t *testing.T) {
	store := streamtest.OpenStore(t)
	g, _ := task.NewGroup(context.Background())
	env := &stream.Env{Store: store}
	up := bfLayouts[0]
	in := &chanSource{schema: up.Types}
	badProgress := ProgressTable(bfProgressID)
	badProgress.PK = []int{1}
	node := func(bf *plan.Backfill) *plan.Node { return &plan.Node{Kind: plan.KindBackfill, Backfill: bf} }
	cases := map[string]struct {
		g      *task.Group
		n      *plan.Node
		inputs []stream.Executor
	}{
		"no payload":     {g, &plan.Node{Kind: plan.KindBackfill}, []stream.Executor{in}},
		"no input":       {g, node(&plan.Backfill{Upstream: up, Columns: []int{0}, ProgressTable: ProgressTable(1)}), nil},
		"no group":       {nil, node(&plan.Backfill{Upstream: up, Columns: []int{0}, ProgressTable: ProgressTable(1)}), []stream.Executor{in}},
		"column range":   {g, node(&plan.Backfill{Upstream: up, Columns: []int{3}, ProgressTable: ProgressTable(1)}), []stream.Executor{in}},
		"progress shape": {g, node(&plan.Backfill{Upstream: up, Columns: []int{0}, ProgressTable: badProgress}), []stream.Executor{in}},
		"input schema": {g, node(&plan.Backfill{Upstream: up, Columns: []int{0}, ProgressTable: ProgressTable(1)}),
			[]stream.Executor{&chanSource{schema: up.Types[:2]}}},
		// A keyless upstream (a global aggregate's single row) is fine:
		// see engine's TestViewOverGlobalAggregate.
		"pk out of range": {g, node(&plan.Backfill{Upstream: plan.Table{ID: 2, Types: bfTypes, PK: []int{9}}, Columns: []int{0}, ProgressTable: ProgressTable(1)}),
			[]stream.Executor{in}},
	}
	for name, c := range cases {
		if _, err := Build(env, c.g, c.n, c.inputs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
