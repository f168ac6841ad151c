package join

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Both inputs are (id, k); the join is on k, each side's stream key is id,
// and the output is left id, left k, right id, right k.
func kvCase(typ plan.JoinType) joinCase {
	return joinCase{
		typ: typ, lt: []types.Type{i64, i64}, rt: []types.Type{i64, i64},
		lk: []int{1}, rk: []int{1}, lsk: []int{0}, rsk: []int{0},
	}
}

const (
	L = 0
	R = 1
)

func TestInnerJoin(t *testing.T) {
	runScript(t, kvCase(plan.InnerJoin), testConfig(), []step{
		{L, "+ 1 1\n+ 2 2", ""},
		{R, "+ 10 1\n+ 11 1", "+ 1 1 10 1\n+ 1 1 11 1\n"},
		{L, "+ 3 1\n- 1 1", "+ 3 1 10 1\n+ 3 1 11 1\n- 1 1 10 1\n- 1 1 11 1\n"},
		// An update moving a right row to another key retracts its old
		// matches and adds the new ones.
		{R, "U- 10 1\nU+ 10 2", "- 3 1 10 1\n+ 2 2 10 2\n"},
		{R, "+ 12 NULL", ""},
		{L, "+ 4 NULL", ""},
		{L, "- 2 2\n- 3 1", "- 2 2 10 2\n- 3 1 11 1\n"},
	})
}

// TestNullOutputColumns: an output column of -1 (an input column
// plan.NullUnread dropped, which nothing reads) is NULL, padded rows too.
func TestNullOutputColumns(t *testing.T) {
	c := kvCase(plan.LeftJoin)
	c.output = []int{0, -1, 2, -1}
	runScript(t, c, testConfig(), []step{
		{L, "+ 1 1\n+ 2 2", "+ 1 NULL NULL NULL\n+ 2 NULL NULL NULL\n"},
		{R, "+ 10 1", "- 1 NULL NULL NULL\n+ 1 NULL 10 NULL\n"},
		{L, "- 1 1", "- 1 NULL 10 NULL\n"},
	})
}

func TestLeftJoin(t *testing.T) {
	runScript(t, kvCase(plan.LeftJoin), testConfig(), []step{
		{L, "+ 1 1\n+ 2 NULL", "+ 1 1 NULL NULL\n+ 2 NULL NULL NULL\n"},
		{R, "+ 10 1", "- 1 1 NULL NULL\n+ 1 1 10 1\n"},
		{R, "+ 11 1", "+ 1 1 11 1\n"},
		{R, "+ 12 NULL", ""},
		{R, "- 10 1", "- 1 1 10 1\n"},
		{R, "- 11 1", "- 1 1 11 1\n+ 1 1 NULL NULL\n"},
		{L, "- 2 NULL\n- 1 1", "- 2 NULL NULL NULL\n- 1 1 NULL NULL\n"},
	})
}

func TestRightJoin(t *testing.T) {
	runScript(t, kvCase(plan.RightJoin), testConfig(), []step{
		{R, "+ 10 1\n+ 11 NULL", "+ NULL NULL 10 1\n+ NULL NULL 11 NULL\n"},
		{L, "+ 1 1\n+ 2 1", "- NULL NULL 10 1\n+ 1 1 10 1\n+ 2 1 10 1\n"},
		{L, "+ 3 NULL", ""},
		{L, "- 1 1", "- 1 1 10 1\n"},
		{L, "- 2 1", "- 2 1 10 1\n+ NULL NULL 10 1\n"},
		{R, "- 10 1", "- NULL NULL 10 1\n"},
	})
}

func TestFullJoin(t *testing.T) {
	runScript(t, kvCase(plan.FullJoin), testConfig(), []step{
		{L, "+ 1 1", "+ 1 1 NULL NULL\n"},
		{R, "+ 10 2", "+ NULL NULL 10 2\n"},
		{L, "U- 1 1\nU+ 1 2", "- 1 1 NULL NULL\n- NULL NULL 10 2\n+ 1 2 10 2\n"},
		{R, "+ 11 2", "+ 1 2 11 2\n"},
		{R, "- 10 2\n- 11 2", "- 1 2 10 2\n- 1 2 11 2\n+ 1 2 NULL NULL\n"},
		{L, "- 1 2", "- 1 2 NULL NULL\n"},
		{R, "+ 12 NULL", "+ NULL NULL 12 NULL\n"},
	})
}

func TestNullSafeKey(t *testing.T) {
	c := kvCase(plan.FullJoin)
	c.nullSafe = []bool{true}
	runScript(t, c, testConfig(), []step{
		{L, "+ 1 NULL", "+ 1 NULL NULL NULL\n"},
		{R, "+ 10 NULL", "- 1 NULL NULL NULL\n+ 1 NULL 10 NULL\n"},
		{R, "- 10 NULL", "- 1 NULL 10 NULL\n+ 1 NULL NULL NULL\n"},
	})
}

// The residual left.id < right.id takes part in matching: a pair that
// fails it is not a match, for the degree too.
func TestResidualLeftJoin(t *testing.T) {
	c := kvCase(plan.LeftJoin)
	lt := expr.Func("<", expr.Input(0, i64), expr.Input(2, i64))
	c.residual = &lt
	c.output = []int{0, 2} // left id, right id
	runScript(t, c, testConfig(), []step{
		{R, "+ 5 1\n+ 0 1", ""},
		{L, "+ 3 1", "+ 3 5\n"},
		{L, "+ 9 1", "+ 9 NULL\n"},
		{R, "+ 10 1", "+ 3 10\n- 9 NULL\n+ 9 10\n"},
		{R, "- 5 1", "- 3 5\n"},
		{R, "- 10 1", "- 3 10\n+ 3 NULL\n- 9 10\n+ 9 NULL\n"},
	})
}

// A residual that errors on a row (division by zero) is NULL there, so the
// pair does not match and the job keeps running.
func TestResidualRowErrorIsNoMatch(t *testing.T) {
	c := kvCase(plan.InnerJoin)
	div := expr.Func(">", expr.Func("/", expr.Input(0, i64), expr.Input(2, i64)), expr.Literal(int64(0), i64))
	c.residual = &div
	runScript(t, c, testConfig(), []step{
		{R, "+ 0 1\n+ 1 1", ""},
		{L, "+ 5 1", "+ 5 1 1 1\n"},
	})
}

// With a one-entry cache and keys of at most one cached row, every probe
// misses or streams from the store; the output must not change.
func TestTinyCacheAndLargeKeys(t *testing.T) {
	cfg := config{chunkSize: 2, cacheEntries: 1, largeKeyRows: 1}
	runScript(t, kvCase(plan.FullJoin), cfg, []step{
		{R, "+ 10 1\n+ 11 1\n+ 20 2", "+ NULL NULL 10 1\n+ NULL NULL 11 1\n+ NULL NULL 20 2\n"},
		{L, "+ 1 1\n+ 2 2", "- NULL NULL 10 1\n+ 1 1 10 1\n- NULL NULL 11 1\n+ 1 1 11 1\n- NULL NULL 20 2\n+ 2 2 20 2\n"},
		{L, "+ 3 1", "+ 3 1 10 1\n+ 3 1 11 1\n"},
		{L, "- 1 1\n- 3 1", "- 1 1 10 1\n- 1 1 11 1\n- 3 1 10 1\n+ NULL NULL 10 1\n- 3 1 11 1\n+ NULL NULL 11 1\n"},
		{R, "- 11 1", "- NULL NULL 11 1\n"},
	})
}

func TestBuildRejectsMalformedNodes(t *testing.T) {
	bad := map[string]func(*plan.HashJoin){
		"no keys":          func(h *plan.HashJoin) { h.LeftKeys, h.RightKeys = nil, nil },
		"key out of range": func(h *plan.HashJoin) { h.LeftKeys = []int{5} },
		"key count":        func(h *plan.HashJoin) { h.RightKeys = []int{0, 1} },
		"null safe count":  func(h *plan.HashJoin) { h.NullSafe = []bool{true, false} },
		"output range":     func(h *plan.HashJoin) { h.Output = []int{0, 9} },
		"join type":        func(h *plan.HashJoin) { h.Type = "semi" },
		"pk prefix":        func(h *plan.HashJoin) { h.LeftTable.PK = []int{0, 1} },
		"table types":      func(h *plan.HashJoin) { h.RightTable.Types = []types.Type{i64} },
		"missing degree":   func(h *plan.HashJoin) { h.LeftDegreeTable = nil },
		"degree types":     func(h *plan.HashJoin) { h.LeftDegreeTable.Types = []types.Type{i64} },
		"residual type": func(h *plan.HashJoin) {
			d := expr.Input(0, i64)
			h.Residual = &d
		},
		"residual column": func(h *plan.HashJoin) {
			d := expr.Input(7, i64)
			h.Residual = &d
		},
	}
	store := streamtest.OpenStore(t)
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			c := kvCase(plan.LeftJoin)
			n := c.node()
			mutate(n.HashJoin)
			g, _ := task.NewGroup(context.Background())
			env := &stream.Env{Store: store, ActorID: testActor}
			inputs := []stream.Executor{stream.NewMockSource(c.lt), stream.NewMockSource(c.rt)}
			if _, err := Build(env, g, n, inputs); err == nil {
				t.Fatal("want an error")
			}
		})
	}
	if _, err := Build(&stream.Env{Store: store}, nil, kvCase(plan.InnerJoin).node(), nil); err == nil {
		t.Fatal("want an error for missing inputs")
	}
}

// TestAppendOnlySideKeepsKeyOrder: an append-only side appends a row to
// its key's cached entry even when it sorts before the last one, and a
// probe still meets the rows in primary-key order, the order a read of
// the state table gives (so the output does not depend on the cache).
func TestAppendOnlySideKeepsKeyOrder(t *testing.T) {
	c := kvCase(plan.InnerJoin)
	c.appendOnly = [2]bool{false, true}
	runScript(t, c, testConfig(), []step{
		{R, "+ 30 1\n+ 10 1\n+ 20 1\n+ 25 1", ""},
		{L, "+ 1 1", "+ 1 1 10 1\n+ 1 1 20 1\n+ 1 1 25 1\n+ 1 1 30 1\n"},
		{R, "+ 5 1\n+ 40 1\n+ 22 1", "+ 1 1 5 1\n+ 1 1 40 1\n+ 1 1 22 1\n"},
		{L, "+ 2 1", "+ 2 1 5 1\n+ 2 1 10 1\n+ 2 1 20 1\n+ 2 1 22 1\n+ 2 1 25 1\n+ 2 1 30 1\n+ 2 1 40 1\n"},
	})
}

// TestCompleteSideDropsEmptiedEntries: on a complete side a key without a
// cache entry has no rows, so an entry emptied by deletes leaves the cache
// and only keys with rows take its room.
func TestCompleteSideDropsEmptiedEntries(t *testing.T) {
	h := runScript(t, kvCase(plan.InnerJoin), testConfig(), []step{
		{R, "+ 10 1\n+ 11 1", ""},
		{R, "- 10 1\n- 11 1", ""},
		{R, "+ 20 2", ""},
		{R, "- 20 2\n+ 30 3", ""},
		{L, "+ 1 1\n+ 2 2\n+ 3 3", "+ 3 3 30 3\n"},
	})
	right := h.exec.sides[R]
	if !right.complete || right.cache.Len() != 1 {
		t.Errorf("right side: complete %v with %d cached keys, want complete with 1 (key 3)", right.complete, right.cache.Len())
	}
}

// TestRarelyProbedSideDropsItsCache: a side that stores rows in an epoch
// without being probed keeps no cache in the next and is probed from its
// state table; probed about as often as it stores, it caches again.
func TestRarelyProbedSideDropsItsCache(t *testing.T) {
	cfg := testConfig()
	cfg.adaptMinStores = 2
	h := runScript(t, kvCase(plan.InnerJoin), cfg, []step{
		{R, "+ 10 1\n+ 11 1\n+ 20 2", ""},
		{L, "+ 1 1", "+ 1 1 10 1\n+ 1 1 11 1\n"},
		{R, "+ 12 1\n- 10 1", "+ 1 1 12 1\n- 1 1 10 1\n"},
		{L, "+ 2 2\n+ 3 1", "+ 2 2 20 2\n+ 3 1 11 1\n+ 3 1 12 1\n"},
	})
	right, left := h.exec.sides[R], h.exec.sides[L]
	if right.uncached || right.cache.Len() == 0 {
		t.Errorf("right side probed twice for two stores: uncached %v with %d cached keys, want cached", right.uncached, right.cache.Len())
	}
	if !left.uncached || left.complete || left.cache.Len() != 0 {
		t.Errorf("left side never probed: uncached %v, complete %v, %d cached keys; want uncached, no cache",
			left.uncached, left.complete, left.cache.Len())
	}
}

// TestUnreadOutputColumnsAreNull: output columns nothing above the join
// reads go out as NULLs; the others, and the rows, are as without.
func TestUnreadOutputColumnsAreNull(t *testing.T) {
	c := kvCase(plan.LeftJoin)
	c.read = []bool{true, false, false, true}
	runScript(t, c, testConfig(), []step{
		{L, "+ 1 1\n+ 2 2", "+ 1 NULL NULL NULL\n+ 2 NULL NULL NULL\n"},
		{R, "+ 10 1", "- 1 NULL NULL NULL\n+ 1 NULL NULL 1\n"},
	})
}

// TestProbesOfMissingKeysWriteNothingShared: joins probing, in parallel,
// keys their complete right sides lack all read the one empty entry every
// join shares; under -race (as CI runs) a write to it fails the test.
func TestProbesOfMissingKeysWriteNothingShared(t *testing.T) {
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runScript(t, kvCase(plan.InnerJoin), testConfig(), []step{
				{L, "+ 1 1\n+ 2 2\n+ 3 3", ""},
				{L, "+ 4 1\n+ 5 2", ""},
				{L, "- 1 1\n+ 6 3", ""},
			})
		})
	}
}
