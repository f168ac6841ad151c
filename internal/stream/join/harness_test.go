package join

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testActor stream.ActorID = 7

var i64 = types.TInt64

// tb is what the harness needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// joinCase describes a join for tests: both inputs, their stream keys and
// the join's parameters. Output nil means every column.
type joinCase struct {
	typ      plan.JoinType
	lt, rt   []types.Type
	lk, rk   []int
	lsk, rsk []int
	nullSafe []bool
	residual *expr.Desc
	output   []int
	// expiry, when set, adds the expiries plan.DeriveJoinExpiry finds
	// with watermarks on these input columns (left, right).
	expiry *[2][]int
	// appendOnly marks sides whose input only inserts
	// (HashJoin.LeftAppendOnly, RightAppendOnly).
	appendOnly [2]bool
	// read marks the output columns read above the join (ReadOnly); nil:
	// all.
	read []bool
}

// node builds the plan node the way the planner is expected to: each side's
// table is keyed by (join key, stream key) and distributed by the join key.
func (c joinCase) node() *plan.Node {
	out := c.output
	if out == nil {
		out = seq(0, len(c.lt)+len(c.rt))
	}
	hj := &plan.HashJoin{
		Type: c.typ, LeftKeys: c.lk, RightKeys: c.rk, NullSafe: c.nullSafe,
		Residual: c.residual, Output: out,
		LeftTable:      sideTable(1, c.lt, c.lk, c.lsk),
		RightTable:     sideTable(2, c.rt, c.rk, c.rsk),
		LeftAppendOnly: c.appendOnly[0], RightAppendOnly: c.appendOnly[1],
	}
	l, r, _ := outerSides(c.typ)
	if l {
		hj.LeftDegreeTable = degreeTable(3, hj.LeftTable, len(c.lk))
	}
	if r {
		hj.RightDegreeTable = degreeTable(4, hj.RightTable, len(c.rk))
	}
	n := &plan.Node{Kind: plan.KindHashJoin, HashJoin: hj, Schema: outSchema(slices.Concat(c.lt, c.rt), out)}
	if c.expiry != nil {
		n.Inputs = []*plan.Node{{Schema: c.lt, Watermarks: c.expiry[0], AppendOnly: true},
			{Schema: c.rt, Watermarks: c.expiry[1], AppendOnly: true}}
		plan.DeriveJoinExpiry(n)
		n.Inputs = nil
	}
	return n
}

// outSchema is the types of the output columns out picks; a -1 (a NULL
// column, plan.NullUnread) is a bigint in these tests.
func outSchema(concat []types.Type, out []int) []types.Type {
	ts := make([]types.Type, len(out))
	for k, o := range out {
		ts[k] = i64
		if o >= 0 {
			ts[k] = concat[o]
		}
	}
	return ts
}

func sideTable(id uint32, ts []types.Type, keys, sk []int) plan.Table {
	pk := slices.Clone(keys)
	for _, c := range sk {
		if !slices.Contains(pk, c) {
			pk = append(pk, c)
		}
	}
	return plan.Table{ID: id, Types: ts, PK: pk, DistKey: keys}
}

func degreeTable(id uint32, t plan.Table, nkeys int) *plan.Table {
	ts := append(pick(t.Types, t.PK), types.TInt64)
	return &plan.Table{ID: id, Types: ts, PK: seq(0, len(t.PK)), DistKey: seq(0, nkeys)}
}

// harness runs one join executor over mock sources on a store.
type harness struct {
	t      tb
	store  *storage.Store
	cancel context.CancelFunc
	g      *task.Group
	ctx    context.Context
	exec   *HashJoin
}

func newHarness(t tb, store *storage.Store, c joinCase, cfg config, left, right stream.Executor) *harness {
	t.Helper()
	return newHarnessEnv(t, &stream.Env{Store: store, ActorID: testActor}, c, c.node(), cfg, left, right)
}

// newHarnessEnv is newHarness with the actor's environment and the plan
// node given.
func newHarnessEnv(t tb, env *stream.Env, c joinCase, n *plan.Node, cfg config, left, right stream.Executor) *harness {
	t.Helper()
	store := env.Store
	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := task.NewGroup(ctx)
	j, err := build(env, g, n, []stream.Executor{left, right}, storeOpener(env), cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	h := &harness{t: t, store: store, cancel: cancel, g: g, ctx: gctx, exec: j}
	t.Cleanup(h.stop)
	if err := j.ReadOnly(c.read); err != nil {
		t.Fatal(err)
	}
	return h
}

// stop cancels the executor's pumps and waits for them.
func (h *harness) stop() {
	h.cancel()
	_ = h.g.Wait()
}

// next pulls one message, failing the test on error.
func (h *harness) next() stream.Message {
	h.t.Helper()
	msg, err := h.exec.Next(h.ctx)
	if err != nil {
		h.t.Fatalf("Next: %v", err)
	}
	return msg
}

// untilBarrier pulls messages up to and including the next barrier and
// returns the chunks' rows as text and the barrier.
func (h *harness) untilBarrier() (string, *stream.Barrier) {
	h.t.Helper()
	var sb strings.Builder
	for {
		msg := h.next()
		switch {
		case msg.Barrier != nil:
			return sb.String(), msg.Barrier
		case msg.Chunk != nil:
			if msg.Chunk.Cardinality() > h.exec.chunkSize {
				h.t.Fatalf("chunk of %d rows exceeds chunk size %d", msg.Chunk.Cardinality(), h.exec.chunkSize)
			}
			sb.WriteString(msg.Chunk.String())
		}
	}
}

func testConfig() config {
	return config{chunkSize: 1024, cacheEntries: 1000, largeKeyRows: defaultLargeKeyRows}
}

// step is one epoch of a scripted test: a chunk on one side (0 or 1).
type step struct {
	side  int
	chunk string
	want  string
}

// runScript feeds each step as its own epoch (so the two inputs' order is
// deterministic), ends with a stop barrier, and checks every epoch's output.
// It returns the harness, whose executor a test may then inspect.
func runScript(t *testing.T, c joinCase, cfg config, steps []step) *harness {
	t.Helper()
	var msgs [2][]stream.Message
	for s := range 2 {
		msgs[s] = append(msgs[s], stream.NewBarrier(1))
	}
	ts := [2][]types.Type{c.lt, c.rt}
	for i, st := range steps {
		msgs[st.side] = append(msgs[st.side], stream.TextChunk(ts[st.side], st.chunk))
		for s := range 2 {
			msgs[s] = append(msgs[s], stream.NewBarrier(uint64(i+2)))
		}
	}
	stop := uint64(len(steps) + 2)
	for s := range 2 {
		msgs[s] = append(msgs[s], stream.NewStopBarrier(stop, testActor))
	}
	h := newHarness(t, streamtest.OpenStore(t), c, cfg,
		stream.NewMockSource(c.lt, msgs[0]...), stream.NewMockSource(c.rt, msgs[1]...))
	if out, b := h.untilBarrier(); out != "" || b.Epoch != 1 {
		t.Fatalf("first epoch: got %q then barrier %d", out, b.Epoch)
	}
	for i, st := range steps {
		out, b := h.untilBarrier()
		if out != st.want {
			t.Errorf("step %d (side %d:\n%s)\ngot:\n%swant:\n%s", i, st.side, st.chunk, out, st.want)
		}
		if b.Epoch != uint64(i+2) {
			t.Fatalf("step %d: barrier %d", i, b.Epoch)
		}
	}
	if out, b := h.untilBarrier(); out != "" || !b.IsStop(testActor) {
		t.Fatalf("last epoch: got %q then %v", out, b)
	}
	return h
}
