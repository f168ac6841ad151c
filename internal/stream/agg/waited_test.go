package agg

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// A value table keeps the values it wrote fresh per epoch, and lets each
// epoch's go once it commits, not only when every epoch has.
func TestWaitedSetForgetsEachCommittedEpoch(t *testing.T) {
	var w waitedSet
	w.add(3, []byte("a"), waitedVals{ints: []int64{1, 2}})
	w.add(3, []byte("b"), waitedVals{vals: []types.Datum{"x"}})
	w.add(4, []byte("c"), waitedVals{ints: []int64{7}})
	has := func(k string) bool {
		_, ok := w.get([]byte(k))
		return ok
	}
	if !has("a") || !has("b") || !has("c") || has("d") {
		t.Fatal("the added groups are not all there")
	}
	w.forgetCommitted(3)
	if has("a") || has("b") || !has("c") || w.empty() {
		t.Fatal("epoch 3's values kept, or epoch 4's let go, at commit 3")
	}
	w.forgetCommitted(4)
	if !w.empty() {
		t.Fatal("values kept after every epoch committed")
	}
}
