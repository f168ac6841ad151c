package agg

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"pgregory.net/rapid"
)

// refStateRow is the state blob's row as it was written before the state
// went through columns: the persisted format, which must not change.
func refStateRow(s *runState) types.Row {
	x := s.r()
	var d types.Datum
	if !x.d.IsZero() || x.d.Exponent != 0 {
		d = new(apd.Decimal).Set(&x.d)
	}
	return types.Row{s.n, s.hi, int64(s.lo), x.f, d, x.nan, x.pinf, x.ninf, x.trues, x.falses}
}

// drawRunState draws a state, with or without its extra part (a count's
// or an integer sum's state has none).
func drawRunState(t *rapid.T) runState {
	i := func(l string) int64 { return rapid.Int64().Draw(t, l) }
	s := runState{n: i("n"), hi: i("hi"), lo: rapid.Uint64().Draw(t, "lo")}
	if !rapid.Bool().Draw(t, "extra") {
		return s
	}
	x := s.w()
	*x = runExtra{
		f:   rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1.5, math.Inf(-1), math.NaN(), 1e300}).Draw(t, "f"),
		nan: i("nan"), pinf: i("pinf"), ninf: i("ninf"), trues: i("trues"), falses: i("falses")}
	x.d.Coeff.SetInt64(rapid.Int64Min(0).Draw(t, "coeff"))
	x.d.Exponent = rapid.Int32Range(-20, 20).Draw(t, "exp")
	x.d.Negative = rapid.Bool().Draw(t, "neg")
	if rapid.Bool().Draw(t, "onlyFloat") { // -0 alone must survive the blob
		f := x.f
		*x = runExtra{f: f}
	}
	return s
}

// TestStateBlobFormatUnchanged: the column-wise state encoding writes the
// bytes the row-wise one did, and reads back every field, for one and for
// several running calls.
func TestStateBlobFormatUnchanged(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 3).Draw(t, "calls")
		calls := make([]*callSpec, n)
		for i := range calls {
			calls[i] = &callSpec{running: true}
		}
		gs := newGroups(nil, 1, nil, calls)
		g := &group{states: make([]runState, n)}
		var ref types.Row
		for i := range g.states {
			g.states[i] = drawRunState(t)
			ref = append(ref, refStateRow(&g.states[i])...)
		}
		want, err := codec.EncodeValue(nil, ref, gs.stateTypes)
		if err != nil {
			t.Fatal(err)
		}
		got, err := gs.encodeStates(g)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("state blob %x, want %x", got, want)
		}
		back := &group{states: make([]runState, n)}
		if err := gs.decodeStates(back, got); err != nil {
			t.Fatal(err)
		}
		for i := range back.states {
			b, w := refStateRow(&back.states[i]), refStateRow(&g.states[i])
			bb, _ := codec.EncodeValue(nil, b, stateTypes)
			wb, _ := codec.EncodeValue(nil, w, stateTypes)
			if !bytes.Equal(bb, wb) {
				t.Fatalf("call %d: decoded %v, want %v", i, b, w)
			}
		}
	})
}

// TestCarveDoesNotShareBytes: blobs carved from one arena are independent.
func TestCarveDoesNotShareBytes(t *testing.T) {
	gs := &groups{}
	a := gs.carve([]byte("abc"))
	b := gs.carve([]byte("xyz"))
	a = append(a, '!') // must not run into b
	if string(b) != "xyz" || string(a) != "abc!" {
		t.Fatalf("a = %q, b = %q", a, b)
	}
	big := gs.carve(make([]byte, arenaSize+1))
	if len(big) != arenaSize+1 {
		t.Fatalf("big blob has %d bytes", len(big))
	}
}

// TestGroupHitDoesNotAllocate: finding a group that is already dirty, or
// in the cache, allocates nothing (the per-row path of every input row).
func TestGroupHitDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	st := streamtest.OpenStore(t)
	in := tsch(i64, i64)
	node := planAgg(in, []int{0}, []plan.AggCall{ac(plan.AggCountStar, i64)}, 1)
	a, err := NewAgg(testEnv(st, 16), &streamtest.CycleSource{Types: in}, node)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := types.Row{int64(1 << 40)} // a boxed int64 that is not cached by the runtime
	g, err := a.groups.get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := a.groups.get(ctx, key); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("dirty hit: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		g.cache = true          // as a flush that wrote its row sets it
		_ = a.groups.endEpoch() // not dirty any more, but cached
		if _, err := a.groups.get(ctx, key); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("cache hit: %v allocations, want 0", n)
	}
}
