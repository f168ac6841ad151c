package topn

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

var i64s = []types.Type{types.TInt64, types.TInt64, types.TInt64}

// cancelExec builds a top-N over (g, v, k) ordered by v, keyed by k, on a
// fresh store, reading the given messages, its table wrapped by wrap.
func cancelExec(t *testing.T, tn *plan.TopN, cfg config, wrap func(stateTable) stateTable, msgs ...stream.Message) *Executor {
	t.Helper()
	tn.OrderBy = []plan.ColumnOrder{{Column: 1}}
	tn.Table = tableFor(i64s, tn.GroupKeys, tn.OrderBy, []int{2})
	node := topNNode(i64s, tn)
	lay, sp, err := validate(node, i64s)
	if err != nil {
		t.Fatal(err)
	}
	env := &stream.Env{Store: streamtest.OpenStore(t), ActorID: testActor}
	table, err := openStateTable(env, tn.Table)
	if err != nil {
		t.Fatal(err)
	}
	return newExecutor(stream.NewMockSource(i64s, msgs...), wrap(table), lay, sp, cfg)
}

func insertChunks(size int, rows []types.Row) []stream.Message {
	b := types.NewBuilder(i64s, size)
	var out []stream.Message
	for _, r := range rows {
		if c := b.Append(types.Insert, r); c != nil {
			out = append(out, stream.ChunkMsg(c))
		}
	}
	if c := b.Take(); c != nil {
		out = append(out, stream.ChunkMsg(c))
	}
	return out
}

func noWrap(s stateTable) stateTable { return s }

// One input chunk whose output is thousands of rows (a tie group entering
// a WITH TIES window) is returned chunk by chunk; a downstream that cancels
// after the first gets context.Canceled from the next Next.
func TestCancelDuringEmit(t *testing.T) {
	const n = 3000
	rows := make([]types.Row, n)
	for i := range rows {
		rows[i] = types.Row{int64(0), int64(7), int64(i)}
	}
	msgs := append([]stream.Message{stream.NewBarrier(1)}, insertChunks(n, rows)...)
	cfg := config{chunkSize: 64, groups: 1, high: 4}
	e := cancelExec(t, &plan.TopN{Limit: 1, WithTies: true}, cfg, noWrap, msgs...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streamtest.FirstFullChunk(t, ctx, e, cfg.chunkSize)
	if e.pending.Len() < n/cfg.chunkSize-1 {
		t.Fatalf("only %d chunks pending: the test no longer emits many", e.pending.Len())
	}
	cancel()
	if _, err := e.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v, want context.Canceled", err)
	}
}

// armingTable arms ctx as a large group scan (limit ≥ big) starts, once
// armed is set, and records what that scan returned.
type armingTable struct {
	stateTable
	ctx    *streamtest.TripCtx
	armed  bool
	big    int
	scans  int
	result error
}

func (a *armingTable) ScanGroup(ctx context.Context, prefix types.Row, limit int) ([]types.Row, bool, error) {
	if !a.armed || limit < a.big {
		return a.stateTable.ScanGroup(ctx, prefix, limit)
	}
	a.armed = false
	a.scans++
	a.ctx.Arm(1) // the scan's own entry check passes: the cancel lands mid-scan
	rows, all, err := a.stateTable.ScanGroup(ctx, prefix, limit)
	a.result = err
	return rows, all, err
}

// A group evicted from the cache is reloaded from the table, its whole
// window at once (LIMIT 3000 here); a cancel landing during that scan ends
// it with context.Canceled instead of reading on.
func TestCancelDuringRefill(t *testing.T) {
	const n = 3000
	var rows []types.Row
	for i := range n {
		rows = append(rows, types.Row{int64(0), int64(i), int64(i)})
	}
	msgs := append([]stream.Message{stream.NewBarrier(1)}, insertChunks(256, rows)...)
	// A row of group 1 evicts group 0 (one cached group), then a delete
	// at the top of group 0 reloads it.
	msgs = append(msgs, insertChunks(256, []types.Row{{int64(1), int64(0), int64(n)}})...)
	msgs = append(msgs, stream.NewBarrier(2))
	del := types.NewBuilder(i64s, 4)
	del.Append(types.Delete, types.Row{int64(0), int64(0), int64(0)})
	msgs = append(msgs, stream.ChunkMsg(del.Take()))
	ctx := streamtest.NewTripCtx()
	var tbl *armingTable
	wrap := func(s stateTable) stateTable { tbl = &armingTable{stateTable: s, ctx: ctx, big: n}; return tbl }
	cfg := config{chunkSize: 1024, groups: 1, high: 4}
	e := cancelExec(t, &plan.TopN{Limit: n, GroupKeys: []int{0}}, cfg, wrap, msgs...)
	for {
		msg, err := e.Next(ctx)
		if err != nil {
			t.Fatalf("before the refill: %v", err)
		}
		if msg.Barrier != nil && msg.Barrier.Epoch == 2 {
			break
		}
	}
	tbl.armed = true
	_, err := e.Next(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next during the refill: %v, want context.Canceled", err)
	}
	if tbl.scans != 1 || !errors.Is(tbl.result, context.Canceled) {
		t.Fatalf("%d armed scans, the scan returned %v: want the refill itself to stop", tbl.scans, tbl.result)
	}
}
