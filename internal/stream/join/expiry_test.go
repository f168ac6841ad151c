package join

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
)

// TestJoinExpiry: with l.t BETWEEN r.t - 5 AND r.t, a left row expires
// once the right watermark passes its t + 5 and a right row once the left
// watermark passes its t; rows that can still match stay and match.
//
// It runs with append-only sides too, whose rows wait for the seal in a
// deferred list (deferred.go), and with configurations whose probes read
// the state table (every key large; no cache), which write the list out
// in the middle of an epoch.
func TestJoinExpiry(t *testing.T) {
	for name, tc := range expiryConfigs() {
		t.Run(name, func(t *testing.T) { checkJoinExpiry(t, tc.appendOnly, tc.cfg) })
	}
}

// expiryConfigs are the ways the expiry tests run: retractable sides, and
// append-only ones (deferred.go), also with every key large and with no
// cache, whose probes read the state table mid-epoch.
func expiryConfigs() map[string]struct {
	appendOnly bool
	cfg        config
} {
	large := testConfig()
	large.largeKeyRows = 1
	uncached := testConfig()
	uncached.adaptMinStores = 1
	return map[string]struct {
		appendOnly bool
		cfg        config
	}{
		"retractable": {false, testConfig()}, "append-only": {true, testConfig()},
		"append-only, large keys": {true, large}, "append-only, uncached": {true, uncached},
	}
}

// expiryCase is TestJoinExpiry's join: l.t BETWEEN r.t - 5 AND r.t, on k,
// over rows (k, t, id).
func expiryCase(appendOnly bool) joinCase {
	in := []types.Type{i64, i64, i64} // k, t, id
	res := expr.Node(expr.KindAnd,
		expr.Func(">=", expr.Input(1, i64), expr.Func("-", expr.Input(4, i64), expr.Literal(int64(5), i64))),
		expr.Func("<=", expr.Input(1, i64), expr.Input(4, i64)))
	return joinCase{typ: plan.InnerJoin, lt: in, rt: in, lk: []int{0}, rk: []int{0}, lsk: []int{2}, rsk: []int{2},
		residual: &res, expiry: &[2][]int{{1}, {1}}, appendOnly: [2]bool{appendOnly, appendOnly}}
}

func checkJoinExpiry(t *testing.T, appendOnly bool, cfg config) {
	c := expiryCase(appendOnly)
	in := c.lt
	if n := c.node(); n.HashJoin.LeftExpiry == nil || n.HashJoin.RightExpiry == nil {
		t.Fatalf("expiries not derived: %+v %+v", n.HashJoin.LeftExpiry, n.HashJoin.RightExpiry)
	}
	st := streamtest.OpenStore(t)
	left := stream.NewMockSource(in, streamtest.Script(in,
		"barrier\n+ 1 10 1\n+ 1 20 2\n+ 1 27 3\nbarrier\nwatermark 1 15\nbarrier\n+ 1 29 4\nbarrier\nbarrier", 1, testActor)...)
	right := stream.NewMockSource(in, streamtest.Script(in,
		"barrier\nbarrier\n+ 1 12 7\nwatermark 1 30\nbarrier\n+ 1 31 8\nbarrier\nbarrier", 1, testActor)...)
	h := newHarness(t, st, c, cfg, left, right)
	var out []string
	for e := 1; e <= 4; e++ {
		rows, b := h.untilBarrier()
		if b.Epoch != uint64(e) {
			t.Fatalf("barrier %d, want %d", b.Epoch, e)
		}
		out = append(out, strings.ReplaceAll(strings.TrimSpace(rows), "\n", "|"))
		if err := st.Commit(context.Background(), b.Epoch, nil); err != nil {
			t.Fatal(err)
		}
		if e == 3 {
			// Right's watermark 30 expired left rows below 25 (10, 20);
			// left's 15 expired right rows below 15 (12).
			for id, want := range map[uint32]int{1: 1, 2: 0} {
				if n, err := st.TableKeyCount(id); err != nil || n != want {
					t.Errorf("table %d keeps %d rows (%v), want %d", id, n, err, want)
				}
			}
		}
	}
	// Epoch 3: 12 matched 10 (10 ≥ 7, 10 ≤ 12). Epoch 4: 31 matches the
	// kept 27 (27 ≥ 26) and 29 then matches 31.
	want := []string{"", "", "+ 1 10 1 1 12 7", "+ 1 27 3 1 31 8|+ 1 29 4 1 31 8"}
	for i := range want {
		if i < len(out) && out[i] != want[i] {
			t.Errorf("epoch %d: %q, want %q", i+1, out[i], want[i])
		}
	}
}

// TestJoinExpiryWithinEpoch: rows that expire at the barrier of the epoch
// they came in still match in that epoch, and the state keeps only the
// rows that outlive it (an append-only side never writes the others).
func TestJoinExpiryWithinEpoch(t *testing.T) {
	want := []string{"", "+ 1 20 2 1 22 7", ""}
	eachExpiryConfig(t, "barrier\n+ 1 10 1\n+ 1 20 2\n+ 1 27 3\nbarrier\n+ 1 40 4\nbarrier",
		"barrier\n+ 1 22 7\nwatermark 1 30\nbarrier\nbarrier", 3,
		func(t *testing.T, st *storage.Store, e int, rows string) {
			if got := strings.ReplaceAll(rows, "\n", "|"); got != want[e-1] {
				t.Errorf("epoch %d: %q, want %q", e, got, want[e-1])
			}
			if e != 2 {
				return
			}
			// Right's watermark 30 expired the left rows below 25 (10
			// and 20) at the barrier of the epoch they came in.
			for id, want := range map[uint32]int{1: 1, 2: 1} {
				if n, err := st.TableKeyCount(id); err != nil || n != want {
					t.Errorf("table %d keeps %d rows (%v), want %d", id, n, err, want)
				}
			}
		})
}

// TestJoinExpiryAfterTheWatermarkStops: the right side's watermark runs
// ahead and then stops (its source finished first). Left rows that keep
// coming below the bound it gives expire at each barrier all the same,
// not only at a barrier that moved the bound: the state keeps none of
// them, and the rows above the bound stay and match.
func TestJoinExpiryAfterTheWatermarkStops(t *testing.T) {
	eachExpiryConfig(t, "barrier\n+ 1 10 1\nbarrier\n+ 1 11 2\n+ 1 12 3\nbarrier\n+ 1 13 4\n+ 1 99 5\nbarrier\nbarrier",
		"barrier\nwatermark 1 50\nbarrier\nbarrier\nbarrier\n+ 1 100 8\nbarrier", 5,
		func(t *testing.T, st *storage.Store, e int, rows string) {
			// From the bound 45 on, only the left row 99 outlives a barrier.
			want := map[int]int{1: 0, 2: 0, 3: 0, 4: 1, 5: 1}[e]
			if n, err := st.TableKeyCount(1); err != nil || n != want {
				t.Errorf("epoch %d: the left table keeps %d rows (%v), want %d", e, n, err, want)
			}
			if wantOut := map[int]string{5: "+ 1 99 5 1 100 8"}[e]; rows != wantOut {
				t.Errorf("epoch %d: %q, want %q", e, rows, wantOut)
			}
		})
}

// eachExpiryConfig runs expiryCase over the scripts of each side in every
// expiryConfigs configuration, epoch by epoch up to epochs, committing
// each and handing check its output rows (trimmed).
func eachExpiryConfig(t *testing.T, left, right string, epochs int,
	check func(t *testing.T, st *storage.Store, e int, rows string)) {
	for name, tc := range expiryConfigs() {
		t.Run(name, func(t *testing.T) {
			c := expiryCase(tc.appendOnly)
			in := c.lt
			st := streamtest.OpenStore(t)
			h := newHarness(t, st, c, tc.cfg, stream.NewMockSource(in, streamtest.Script(in, left, 1, testActor)...),
				stream.NewMockSource(in, streamtest.Script(in, right, 1, testActor)...))
			for e := 1; e <= epochs; e++ {
				rows, b := h.untilBarrier()
				if err := st.Commit(context.Background(), b.Epoch, nil); err != nil {
					t.Fatal(err)
				}
				check(t, st, e, strings.TrimSpace(rows))
			}
		})
	}
}

// TestRowsExpiredWithinTheirEpochAreNotSealed: rows stored and expired
// within one epoch are in no sealed run, on a retractable side too. A
// stored row is of a key the side does not hold (its input's stream key
// is unique), so the table takes it as fresh and drops it together with
// its delete at the seal: no tombstone reaches the batch, the memtable or
// a compaction (Nexmark q5's window counts, stored for the barrier's
// probe and expired right after it).
func TestRowsExpiredWithinTheirEpochAreNotSealed(t *testing.T) {
	for name, tc := range expiryConfigs() {
		t.Run(name, func(t *testing.T) {
			c := expiryCase(tc.appendOnly)
			in := c.lt
			st := streamtest.OpenStore(t)
			h := newHarness(t, st, c, tc.cfg,
				stream.NewMockSource(in, streamtest.Script(in, "barrier\n+ 1 10 1\n+ 1 20 2\n+ 1 27 3\nbarrier", 1, testActor)...),
				stream.NewMockSource(in, streamtest.Script(in, "barrier\nwatermark 1 30\nbarrier", 1, testActor)...))
			h.untilBarrier()
			if err := st.Commit(context.Background(), 1, nil); err != nil {
				t.Fatal(err)
			}
			h.untilBarrier() // epoch 2 is sealed, not committed
			// Right's watermark 30 expired 10 and 20; 27 stays.
			rows := h.exec.sides[0].rows
			if d, ok := rows.(*deferredTable); ok {
				rows = d.stateTable
			}
			tbl, ok := rows.(interface{ OverlayLen() int })
			if !ok {
				t.Fatalf("left table %T", h.exec.sides[0].rows)
			}
			if n := tbl.OverlayLen(); n != 1 {
				t.Errorf("the left table's sealed run holds %d writes, want 1 (the row that stays)", n)
			}
		})
	}
}
