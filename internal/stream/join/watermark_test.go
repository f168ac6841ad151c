package join

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestJoinWatermark: an inner join passes the lesser of its sides'
// watermarks on a key pair as the watermark of both key columns, and
// deletes the state below it at the barrier.
func TestJoinWatermark(t *testing.T) {
	in := []types.Type{i64, i64}
	c := joinCase{typ: plan.InnerJoin, lt: in, rt: in, lk: []int{0}, rk: []int{0}, lsk: []int{1}, rsk: []int{1}}
	st := streamtest.OpenStore(t)
	left := stream.NewMockSource(in, streamtest.Script(in, "barrier\n+ 1 10\n+ 5 50\nwatermark 0 3\nbarrier\nbarrier", 1, testActor)...)
	right := stream.NewMockSource(in, streamtest.Script(in, "barrier\n+ 1 100\n+ 5 500\nwatermark 0 4\nwatermark 1 7\nbarrier\nbarrier", 1, testActor)...)
	h := newHarness(t, st, c, testConfig(), left, right)
	if _, b := h.untilBarrier(); b.Epoch != 1 {
		t.Fatalf("first barrier %d", b.Epoch)
	}
	var rows, wms []string
	for {
		msg := h.next()
		if msg.Barrier != nil {
			break
		}
		if msg.Chunk != nil {
			rows = append(rows, strings.Split(strings.TrimSpace(msg.Chunk.String()), "\n")...)
			continue
		}
		if msg.Watermark != nil {
			wms = append(wms, streamtest.Render(msg, testActor))
			if len(rows) != 2 {
				t.Fatalf("watermark before the rows it follows: %v", rows)
			}
		}
	}
	slices.Sort(rows)
	if got := strings.Join(rows, "|"); got != "+ 1 10 1 100|+ 5 50 5 500" {
		t.Fatalf("rows %s", got)
	}
	if got := strings.Join(wms, "|"); got != "watermark 0 3|watermark 2 3" {
		t.Fatalf("watermarks %s", got)
	}
	if err := st.Commit(context.Background(), 2, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{1, 2} {
		if n, err := st.TableKeyCount(id); err != nil || n != 1 {
			t.Fatalf("side table %d keeps %d rows (%v), want the one at or above the watermark", id, n, err)
		}
	}
}
