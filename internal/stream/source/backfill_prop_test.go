package source

import (
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"pgregory.net/rapid"
)

var bfTypes = []types.Type{types.TInt64, types.TInt64, types.TVarchar}

// bfLayouts are upstream tables (k, v, s) laid out differently: pk (k)
// spread over all vnodes; pk (v DESC NULLS FIRST, k) in one vnode; the same
// pk spread by k.
var bfLayouts = []plan.Table{
	{ID: 20, Types: bfTypes, PK: []int{0}, DistKey: []int{0}},
	{ID: 20, Types: bfTypes, PK: []int{1, 0}, Orders: []codec.Order{{Desc: true, NullsFirst: true}, {}}},
	{ID: 20, Types: bfTypes, PK: []int{1, 0}, Orders: []codec.Order{{Desc: true}, {}}, DistKey: []int{0}},
}

// bfColumns are projections; each keeps the pk columns (0 and 1 cover every
// layout's pk), so output rows are unique and the harness checks strictly.
var bfColumns = [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0}}

// TestBackfillNoGapNoDuplicateProperty: an upstream table with random rows,
// random inserts, deletes and updates arriving through the input while the
// backfill scans in chunks of 2–4, random checkpoint and non-checkpoint
// barriers, epochs left uncommitted, and crashes (in the middle of an epoch
// too). Once the backfill is done, its committed output must equal the
// table, projected, and no row may ever have been inserted twice or
// deleted while absent.
func TestBackfillNoGapNoDuplicateProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		up := bfLayouts[rapid.IntRange(0, len(bfLayouts)-1).Draw(t, "layout")]
		cols := bfColumns[rapid.IntRange(0, len(bfColumns)-1).Draw(t, "cols")]
		h := newBFHarness(t, up, cols, rapid.IntRange(2, 4).Draw(t, "chunk"))
		keys := rapid.IntRange(1, 60).Draw(t, "keys")
		for range rapid.IntRange(0, 40).Draw(t, "initial") {
			h.randomChange(t, keys)
		}
		h.epoch = 1
		if err := h.upTable.Seal(1); err != nil {
			t.Fatal(err)
		}
		commit(t, h.store, 1)
		h.modelC = maps(h.model)
		h.start()
		defer func() { h.stop() }()

		t.Repeat(map[string]func(*rapid.T){
			"epoch": func(t *rapid.T) {
				h.feedChanges(t, keys)
				checkpoint := rapid.IntRange(0, 4).Draw(t, "nocheckpoint") > 0
				h.sealAndBarrier(checkpoint)
				h.pullThroughBarrier(checkpoint && rapid.Bool().Draw(t, "commit"))
			},
			"crash": func(t *rapid.T) {
				h.feedChanges(t, keys)
				h.pullBriefly(rapid.IntRange(0, 3).Draw(t, "pulls"))
				h.crash()
			},
		})
		// Quiet epochs until the scan is done, then one more to commit.
		for i := 0; ; i++ {
			if _, done := h.bf.Progress(); done {
				break
			}
			if i > 500 {
				t.Fatalf("backfill not done after %d quiet epochs", i)
			}
			h.sealAndBarrier(true)
			h.pullThroughBarrier(true)
		}
		h.feedChanges(t, keys) // after done, everything is forwarded
		h.sealAndBarrier(true)
		h.pullThroughBarrier(true)
		h.checkOutput()
	})
}

// feedChanges makes 0–3 chunks of random changes and feeds them.
func (h *bfHarness) feedChanges(t *rapid.T, keys int) {
	for range rapid.IntRange(0, 3).Draw(t, "chunks") {
		bld := types.NewBuilder(h.up.Types, 64)
		for range rapid.IntRange(1, 5).Draw(t, "changes") {
			for _, ch := range h.randomChange(t, keys) {
				bld.Append(ch.op, ch.row)
			}
		}
		if c := bld.Take(); c != nil {
			h.in.ch <- stream.ChunkMsg(c)
		}
	}
}

type change struct {
	op  types.Op
	row types.Row
}

// randomChange inserts, deletes or updates a row of the upstream table and
// returns the change as the table's materialize would emit it.
func (h *bfHarness) randomChange(t *rapid.T, keys int) []change {
	k := int64(rapid.IntRange(0, keys-1).Draw(t, "k"))
	var old types.Row
	for _, row := range h.model {
		if row[0] == k {
			old = row
		}
	}
	var v types.Datum = int64(rapid.IntRange(0, 9).Draw(t, "v"))
	if rapid.IntRange(0, 9).Draw(t, "vnull") == 0 {
		v = nil
	}
	row := types.Row{k, v, fmt.Sprintf("s%d", rapid.IntRange(0, 99).Draw(t, "s"))}
	switch {
	case old == nil:
		h.write(types.Insert, row)
		return []change{{types.Insert, row}}
	case rapid.Bool().Draw(t, "delete"):
		h.write(types.Delete, old)
		return []change{{types.Delete, old}}
	default:
		// The pk may change (layouts keyed by v): a pair across keys.
		h.write(types.Delete, old)
		h.write(types.Insert, row)
		return []change{{types.UpdateDelete, old}, {types.UpdateInsert, row}}
	}
}
