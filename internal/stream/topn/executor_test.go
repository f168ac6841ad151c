package topn

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
)

// TestDataDriven runs the scripts in testdata. Commands:
//
//	new <topNArgs> [high=N] [groups=N] [chunk=N]  a fresh store and executor
//	chunk (rows in text form)                     feed a chunk
//	barrier / stop                                 feed the next (stop) barrier
//	commit                                         commit the last barrier's epoch
//	crash                                          abort uncommitted state and
//	                                               rebuild the executor on the store
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		ctx := context.Background()
		var h *harness
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "new":
				schema, tn := topNArgs(t, d)
				cfg := config{chunkSize: 1024, groups: 1 << 10, high: 16}
				d.MaybeScanArgs(t, "high", &cfg.high)
				d.MaybeScanArgs(t, "groups", &cfg.groups)
				d.MaybeScanArgs(t, "chunk", &cfg.chunkSize)
				h = &harness{schema: schema, node: topNNode(schema, tn), cfg: cfg}
				h.env = &stream.Env{Store: streamtest.OpenStore(t), ActorID: testActor}
				if err := h.build(1); err != nil {
					return "error: " + err.Error()
				}
			case "commit":
				if err := h.env.Store.Commit(ctx, h.epoch, nil); err != nil {
					return "error: " + err.Error()
				}
				return fmt.Sprintf("committed %d\n", h.epoch)
			case "crash":
				h.env.Store.AbortUncommitted()
				if err := h.build(h.epoch + 1); err != nil {
					return "error: " + err.Error()
				}
			default:
				h.push(t, d)
			}
			out, err := h.drain(ctx)
			if err != nil {
				return out + "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}
