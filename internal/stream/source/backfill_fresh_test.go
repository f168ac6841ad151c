package source

import (
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/task"
)

// passingChan is a chanSource that records the take PassFresh gives it.
type passingChan struct {
	*chanSource
	take func() bool
}

func (p *passingChan) PassFresh(take func() bool) { p.take = take }

// TestBackfillPassesFreshOnceDone: a backfill keeping every column of its
// upstream in order lets fresh rows through only once its scan is done,
// and passes those that reach it then unchanged; one that projects never
// lets them through.
func TestBackfillPassesFreshOnceDone(t *testing.T) {
	up := bfLayouts[0]
	for _, tc := range []struct {
		cols   []int
		passes bool
	}{{[]int{0, 1, 2}, true}, {[]int{0, 1}, false}, {[]int{1, 0, 2}, false}} {
		in := &passingChan{chanSource: &chanSource{schema: up.Types, ch: make(chan stream.Message, 8)}}
		g, ctx := task.NewGroup(t.Context())
		env := &stream.Env{Store: streamtest.OpenStore(t), ActorID: bfActor, Throttle: stream.NewThrottle()}
		n := &plan.Node{Kind: plan.KindBackfill, Inputs: []*plan.Node{{}},
			Backfill: &plan.Backfill{Upstream: up, Columns: tc.cols, ProgressTable: ProgressTable(bfProgressID)}}
		ex, err := Build(env, g, n, []stream.Executor{in})
		if err != nil {
			t.Fatal(err)
		}
		bf := ex.(*Backfill)
		bf.PassFresh(func() bool { return true })
		if (in.take != nil) != tc.passes {
			t.Fatalf("columns %v: passed on %v", tc.cols, in.take != nil)
		}
		if !tc.passes {
			g.Cancel()
			_ = g.Wait()
			continue
		}
		if in.take() {
			t.Fatal("fresh rows taken before the scan is done")
		}
		// The upstream table is empty: the scan of the epoch after the
		// first barrier finds nothing and finishes.
		for epoch := uint64(1); epoch <= 3 && !bf.finished.Load(); epoch++ {
			in.ch <- stream.BarrierMsg(&stream.Barrier{Epoch: epoch, Checkpoint: true})
			if m, err := bf.Next(ctx); err != nil || m.Barrier == nil {
				t.Fatalf("epoch %d: %v, %v", epoch, m, err)
			}
			commit(t, env.Store, epoch)
		}
		if !in.take() {
			t.Fatal("fresh rows not taken after the scan is done")
		}
		f := &stream.FreshRows{IDs: []int64{5}, Rows: storage.EncodedRows{Buf: []byte{4, 10}, Spans: []uint32{0, 2}}}
		in.ch <- stream.Message{Fresh: f}
		if m, err := bf.Next(ctx); err != nil || m.Fresh != f {
			t.Fatalf("after the scan: %v, %v; want the fresh rows", m, err)
		}
		g.Cancel()
		_ = g.Wait()
		bf.Release()
	}
}
