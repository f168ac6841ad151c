package agg

import (
	"context"
	"strings"
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

func testEnv(st *storage.Store, cache int) *stream.Env {
	return &stream.Env{Store: st, ActorID: testActor, CacheEntries: cache, ChunkSize: 4}
}

// script parses a test script (see streamtest.Script) whose "stop" stops
// testActor.
func script(in []types.Type, text string, firstEpoch uint64) []stream.Message {
	return streamtest.Script(in, text, firstEpoch, testActor)
}

// drain pulls e until the stop barrier and returns the output in text
// form, one "barrier" line per barrier. It fails the test if an update
// pair is split across chunks.
func drain(t testing.TB, e stream.Executor) string {
	t.Helper()
	var sb strings.Builder
	for _, msg := range streamtest.PullUntilStop(context.Background(), t, e, testActor) {
		switch {
		case msg.Chunk != nil:
			checkPairs(t, msg.Chunk)
			sb.WriteString(msg.Chunk.String())
		case msg.Barrier != nil:
			sb.WriteString("barrier\n")
		}
	}
	return sb.String()
}

// pullToBarrier pulls e up to a barrier, checking each chunk's update
// pairs and handing it to apply.
func pullToBarrier(t fataler, e stream.Executor, apply func(*types.Chunk)) {
	for {
		msg, err := e.Next(context.Background())
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if msg.Barrier != nil {
			return
		}
		if msg.Chunk != nil {
			checkPairs(t, msg.Chunk)
			apply(msg.Chunk)
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
