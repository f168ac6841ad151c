package agg

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testActor stream.ActorID = 7

var (
	i32  = types.TInt32
	i64  = types.TInt64
	f64  = types.TFloat64
	dec  = types.TDecimal
	str  = types.TVarchar
	boo  = types.TBool
	i16  = types.TInt16
	f32  = types.TFloat32
	tsch = func(ts ...types.Type) []types.Type { return ts }
)

// ac builds an AggCall of kind with result type t over args.
func ac(kind plan.AggKind, t types.Type, args ...int) plan.AggCall {
	return plan.AggCall{Kind: kind, Type: t, Args: args}
}

func distinct(c plan.AggCall) plan.AggCall { c.Distinct = true; return c }

// filterCol makes the call's FILTER the boolean input column col.
func filterCol(c plan.AggCall, col int) plan.AggCall {
	d := expr.Input(col, types.TBool)
	c.Filter = &d
	return c
}

func orderBy(c plan.AggCall, col int, desc bool) plan.AggCall {
	o := plan.ColumnOrder{Column: col}
	o.Order.Desc = desc
	o.Order.NullsFirst = desc
	c.OrderBy = append(c.OrderBy, o)
	return c
}

// planAgg fills in the state tables as the planner would, from the
// layouts this package documents. Table ids start at base.
func planAgg(in []types.Type, groupKeys []int, calls []plan.AggCall, base uint32) *plan.Agg {
	var dist []int
	for i := range groupKeys {
		dist = append(dist, i)
	}
	l := ResultLayout(in, groupKeys, calls)
	a := &plan.Agg{GroupKeys: groupKeys, ResultTable: plan.Table{ID: base, Types: l.Types, PK: l.PK, DistKey: dist}}
	for i := range calls {
		if cl, ok := CallLayout(in, groupKeys, calls[i]); ok {
			base++
			calls[i].Table = &plan.Table{ID: base, Types: cl.Types, PK: cl.PK, Orders: cl.Orders, DistKey: dist}
		}
	}
	a.Calls = calls
	return a
}

func planDistinct(in []types.Type, keys []int, id uint32) *plan.Distinct {
	l := DistinctLayout(in, keys)
	var dist []int
	for i := range keys {
		dist = append(dist, i)
	}
	return &plan.Distinct{Keys: keys, Table: plan.Table{ID: id, Types: l.Types, PK: l.PK, DistKey: dist}}
}

func openStore(t testing.TB) *storage.Store {
	t.Helper()
	st, err := storage.Open(context.Background(), storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func testEnv(st *storage.Store, cache int) *stream.Env {
	return &stream.Env{Store: st, ActorID: testActor, CacheEntries: cache, ChunkSize: 4}
}

// script parses a test script: "barrier" and "stop" lines are barriers
// (epochs 1, 2, ...; stop stops testActor), other lines are rows of the
// chunk that the next barrier closes.
func script(in []types.Type, text string, firstEpoch uint64) []stream.Message {
	var msgs []stream.Message
	var rows []string
	epoch := firstEpoch
	flush := func() {
		if len(rows) > 0 {
			msgs = append(msgs, stream.TextChunk(in, strings.Join(rows, "\n")))
			rows = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "barrier":
			flush()
			msgs = append(msgs, stream.NewBarrier(epoch))
			epoch++
		case line == "stop":
			flush()
			msgs = append(msgs, stream.NewStopBarrier(epoch, testActor))
			epoch++
		case line == "chunk": // force a chunk boundary
			flush()
		default:
			rows = append(rows, line)
		}
	}
	flush()
	return msgs
}

// drain pulls e until the stop barrier and returns the output in text
// form, one "barrier N" line per barrier. It fails the test if an update
// pair is split across chunks.
func drain(t testing.TB, e stream.Executor) string {
	t.Helper()
	var sb strings.Builder
	ctx := context.Background()
	for {
		msg, err := e.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v\nsofar:\n%s", err, sb.String())
		}
		switch {
		case msg.Chunk != nil:
			checkPairs(t, msg.Chunk)
			sb.WriteString(msg.Chunk.String())
		case msg.Barrier != nil:
			sb.WriteString("barrier\n")
			if msg.Barrier.IsStop(testActor) {
				return sb.String()
			}
		}
	}
}

// fataler is what checkPairs needs from *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func checkPairs(t fataler, c *types.Chunk) {
	t.Helper()
	for i := 0; i < c.Capacity(); i++ {
		op := c.Op(i)
		if op == types.UpdateDelete && (i+1 >= c.Capacity() || c.Op(i+1) != types.UpdateInsert) {
			t.Fatalf("U- without U+ in chunk:\n%s", c.String())
		}
		if op == types.UpdateInsert && (i == 0 || c.Op(i-1) != types.UpdateDelete) {
			t.Fatalf("U+ without U- in chunk:\n%s", c.String())
		}
	}
}

func trimLines(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}
