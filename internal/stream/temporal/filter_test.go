package temporal

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var schema = []types.Type{types.TInt64, types.TTimestamptz}

// at is a barrier of epoch e whose time is t micros.
func at(e uint64, t int64) stream.Message {
	return stream.BarrierMsg(&stream.Barrier{Epoch: e, Time: types.DTimestamptz(t)})
}

func rows(text string) stream.Message { return stream.TextChunk(schema, text) }

// filter builds `ts op now() - 10` over (id, ts) keyed by id.
func filter(t *testing.T, st *storage.Store, op string, msgs ...stream.Message) *Filter {
	t.Helper()
	bound := expr.Func("-", expr.Func("now"), expr.Literal(types.DInterval{Micros: 10}, types.TInterval))
	bound.Args[0].Type, bound.Type = types.TTimestamptz, types.TTimestamptz
	n := &plan.Node{Kind: plan.KindTemporalFilter, Schema: schema, StreamKey: []int{0},
		TemporalFilter: &plan.TemporalFilter{Col: 1, Op: op, Bound: bound, Table: plan.TemporalFilterTable(5, schema, 1, []int{0})}}
	f, err := NewFilter(&stream.Env{Store: st, ActorID: 1}, n, stream.NewMockSource(schema, msgs...))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func run(t *testing.T, f *Filter, until uint64) string {
	t.Helper()
	return streamtest.RenderUntilEpoch(t, f, until, 1)
}

// The rows' times are micros after 2000-01-01, where timestamps count
// from, so the barriers' times can be small numbers.

func TestTemporalFilterExpires(t *testing.T) {
	st := streamtest.OpenStore(t)
	f := filter(t, st, ">",
		at(1, 100), // bound 90
		rows("+ 1 2000-01-01T00:00:00.000095+00\n+ 2 2000-01-01T00:00:00.00009+00\n+ 3 NULL\n+ 4 2000-01-01T00:00:00.0002+00"),
		at(2, 106), // bound 96: 1 expires
		rows("- 4 2000-01-01T00:00:00.0002+00\n- 2 2000-01-01T00:00:00.00009+00"),
		at(3, 300), // bound 290: nothing left
	)
	want := `barrier 1
+ 1 '2000-01-01 00:00:00.000095+00'
+ 4 '2000-01-01 00:00:00.0002+00'
barrier 2
- 1 '2000-01-01 00:00:00.000095+00'
- 4 '2000-01-01 00:00:00.0002+00'
barrier 3`
	if got := run(t, f, 3); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestTemporalFilterArrivesAfterRestart: with <= rows arrive as time
// passes, right after the barrier that moves the bound, also those whose
// time came while the job was down: a rebuilt filter releases them after
// its first barrier (the release at barrier 3 belonged to the lost epoch
// 4). A NULL bound keeps nothing.
func TestTemporalFilterArrivesAfterRestart(t *testing.T) {
	st := streamtest.OpenStore(t)
	f := filter(t, st, "<=",
		at(1, 100), // bound 90
		rows("+ 1 2000-01-01T00:00:00.00009+00\n+ 2 2000-01-01T00:00:00.0001+00\n+ 3 2000-01-01T00:00:00.0005+00"),
		at(2, 105), // bound 95
		at(3, 110), // bound 100: 2 arrives after it, in epoch 4
	)
	want := `barrier 1
+ 1 '2000-01-01 00:00:00.00009+00'
barrier 2
barrier 3`
	if got := run(t, f, 3); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := st.Commit(context.Background(), 3, nil); err != nil {
		t.Fatal(err)
	}
	f = filter(t, st, "<=", at(4, 1000), rows("- 3 2000-01-01T00:00:00.0005+00"), at(5, 1001))
	want = `barrier 4
+ 2 '2000-01-01 00:00:00.0001+00'
+ 3 '2000-01-01 00:00:00.0005+00'
- 3 '2000-01-01 00:00:00.0005+00'
barrier 5`
	if got := run(t, f, 5); got != want {
		t.Fatalf("after restart:\n%s\nwant:\n%s", got, want)
	}
}
