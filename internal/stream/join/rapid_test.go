package join

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// Both inputs of the property test are (id, k, v): stream key id, join on
// k, optional residual left.v <= right.v.
var idkv = []types.Type{i64, i64, i64}

var joinTypes = []plan.JoinType{plan.InnerJoin, plan.LeftJoin, plan.RightJoin, plan.FullJoin}

func propCase(typ plan.JoinType, nullSafe, residual bool) joinCase {
	c := joinCase{typ: typ, lt: idkv, rt: idkv, lk: []int{1}, rk: []int{1}, lsk: []int{0}, rsk: []int{0},
		nullSafe: []bool{nullSafe}}
	if residual {
		le := expr.Func("<=", expr.Input(2, i64), expr.Input(5, i64))
		c.residual = &le
	}
	return c
}

// model is the net input: each side's live rows by id.
type model struct {
	rows   [2]map[int64]types.Row
	nextID [2]int64
}

func newModel() *model {
	return &model{rows: [2]map[int64]types.Row{{}, {}}}
}

func (m *model) snapshot() [2][]types.Row {
	var out [2][]types.Row
	for s := range 2 {
		for _, id := range slices.Sorted(maps.Keys(m.rows[s])) {
			out[s] = append(out[s], m.rows[s][id])
		}
	}
	return out
}

// script is the generated input: per side, the messages to feed; and per
// barrier epoch, the net input as of that barrier.
type script struct {
	msgs   [2][]stream.Message
	states map[uint64][2][]types.Row
	stop   uint64
}

// genScript generates the input; a side marked in insertsOnly only
// inserts.
func genScript(t *rapid.T, insertsOnly [2]bool) *script {
	m := newModel()
	sc := &script{states: map[uint64][2][]types.Row{}}
	var bs [2]*types.Builder
	for s := range 2 {
		bs[s] = types.NewBuilder(idkv, 256)
		sc.msgs[s] = append(sc.msgs[s], stream.NewBarrier(1))
	}
	sc.states[1] = m.snapshot()
	epoch := uint64(1)
	flush := func() {
		for s := range 2 {
			if c := bs[s].Take(); c != nil {
				sc.msgs[s] = append(sc.msgs[s], stream.ChunkMsg(c))
			}
		}
	}
	nops := rapid.IntRange(1, 60).Draw(t, "ops")
	for range nops {
		switch rapid.IntRange(0, 9).Draw(t, "op") {
		case 0:
			flush()
			epoch++
			for s := range 2 {
				sc.msgs[s] = append(sc.msgs[s], stream.NewBarrier(epoch))
			}
			sc.states[epoch] = m.snapshot()
		case 1:
			flush()
		default:
			s, rows := genRowOp(t, m, insertsOnly)
			for _, r := range rows {
				if c := bs[s].Append(r.op, r.row); c != nil {
					sc.msgs[s] = append(sc.msgs[s], stream.ChunkMsg(c))
				}
			}
		}
	}
	flush()
	sc.stop = epoch + 1
	for s := range 2 {
		sc.msgs[s] = append(sc.msgs[s], stream.NewStopBarrier(sc.stop, testActor))
	}
	sc.states[sc.stop] = m.snapshot()
	return sc
}

func drawNullable(t *rapid.T, label string, hi int64) types.Datum {
	v := rapid.Int64Range(-1, hi).Draw(t, label)
	if v < 0 {
		return nil
	}
	return v
}

type opRow struct {
	op  types.Op
	row types.Row
}

// genRowOp returns an insert, a delete or an update of one side's row.
func genRowOp(t *rapid.T, m *model, insertsOnly [2]bool) (int, []opRow) {
	s := rapid.IntRange(0, 1).Draw(t, "side")
	ids := slices.Sorted(maps.Keys(m.rows[s]))
	kind := rapid.IntRange(0, 2).Draw(t, "kind")
	if len(ids) == 0 || insertsOnly[s] {
		kind = 0
	}
	fresh := func(id int64) types.Row {
		return types.Row{id, drawNullable(t, "k", 2), drawNullable(t, "v", 3)}
	}
	switch kind {
	case 0:
		m.nextID[s]++
		r := fresh(m.nextID[s])
		m.rows[s][m.nextID[s]] = r
		return s, []opRow{{types.Insert, r}}
	case 1:
		id := rapid.SampledFrom(ids).Draw(t, "id")
		old := m.rows[s][id]
		delete(m.rows[s], id)
		return s, []opRow{{types.Delete, old}}
	}
	id := rapid.SampledFrom(ids).Draw(t, "id")
	r, old := fresh(id), m.rows[s][id]
	m.rows[s][id] = r
	return s, []opRow{{types.UpdateDelete, old}, {types.UpdateInsert, r}}
}

// oracle computes the join of the net input from scratch, naively.
func oracle(c joinCase, in [2][]types.Row) map[string]int {
	out := map[string]int{}
	add := func(l, r types.Row) {
		if l == nil {
			l = make(types.Row, len(c.lt))
		}
		if r == nil {
			r = make(types.Row, len(c.rt))
		}
		out[types.FormatRow(slices.Concat(l, r), slices.Concat(c.lt, c.rt))]++
	}
	outerL, outerR, _ := outerSides(c.typ)
	matchedR := map[int]bool{}
	for _, l := range in[0] {
		n := 0
		for j, r := range in[1] {
			if oracleMatch(c, l, r) {
				add(l, r)
				matchedR[j] = true
				n++
			}
		}
		if n == 0 && outerL {
			add(l, nil)
		}
	}
	for j, r := range in[1] {
		if outerR && !matchedR[j] {
			add(nil, r)
		}
	}
	return out
}

func oracleMatch(c joinCase, l, r types.Row) bool {
	lk, rk := l[1], r[1]
	switch {
	case lk == nil || rk == nil:
		if !(c.nullSafe[0] && lk == nil && rk == nil) {
			return false
		}
	case lk.(int64) != rk.(int64):
		return false
	}
	if c.residual == nil {
		return true
	}
	return l[2] != nil && r[2] != nil && l[2].(int64) <= r[2].(int64)
}

// applyChunk applies output rows to a multiset, failing on a retraction of
// a row that is not there.
func applyChunk(t tb, ms map[string]int, c *types.Chunk, ts []types.Type) {
	for _, i := range c.VisibleIndices() {
		k := types.FormatRow(c.Row(i), ts)
		if c.Op(i).IsInsert() {
			ms[k]++
			continue
		}
		if ms[k] == 0 {
			t.Fatalf("retraction of absent row %s", k)
		}
		if ms[k]--; ms[k] == 0 {
			delete(ms, k)
		}
	}
}

func TestJoinMatchesOracle(t *testing.T) {
	for _, cache := range []int{1, 1000} {
		t.Run(fmt.Sprintf("cache=%d", cache), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { checkAgainstOracle(rt, cache) })
		})
	}
}

func checkAgainstOracle(rt *rapid.T, cache int) {
	c := propCase(rapid.SampledFrom(joinTypes).Draw(rt, "type"),
		rapid.Bool().Draw(rt, "nullSafe"), rapid.Bool().Draw(rt, "residual"))
	cfg := config{
		cacheEntries: cache,
		chunkSize:    rapid.SampledFrom([]int{1, 2, 1024}).Draw(rt, "chunk"),
		largeKeyRows: rapid.SampledFrom([]int{1, 3, 4096}).Draw(rt, "large"),
		// 1: a side with a store and no probe in an epoch drops its cache.
		adaptMinStores: rapid.SampledFrom([]int{1, 1 << 30}).Draw(rt, "adaptMinStores"),
	}
	// An append-only side stores its rows as keys new to its table.
	c.appendOnly = [2]bool{rapid.Bool().Draw(rt, "leftAppendOnly"), rapid.Bool().Draw(rt, "rightAppendOnly")}
	sc := genScript(rt, c.appendOnly)
	h := newHarness(rt, streamtest.OpenStore(rt), c, cfg,
		stream.NewMockSource(idkv, sc.msgs[0]...), stream.NewMockSource(idkv, sc.msgs[1]...))
	defer h.stop()
	runUntil(rt, h, c, sc, map[string]int{}, 0, sc.stop, nil)
}
