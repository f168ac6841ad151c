package catalog

import (
	"testing"
)

// Regression tests for bugs found in review.

// TestClosureDiamondOrder: t(1) ← p(2), t ← q(3), r(4) reads p and q.
// Closure(t) must list r after q ("dependents last"); a drop that marks
// relations in closure order (or its reverse) relies on it.
func TestClosureDiamondOrder(t *testing.T) {
	e := newEnv(t)
	for _, r := range []*Relation{table(1, "t"), view(2, "p", 1), view(3, "q", 1), view(4, "r", 2, 3)} {
		e.put(r)
	}
	checkTopological(t, e.cat.Closure(1))
}

// TestPutCopiesSlices: changing a relation after Put must not change the
// catalog's in-memory copy (which would then disagree with the store).
func TestPutCopiesSlices(t *testing.T) {
	e := newEnv(t)
	r := view(3, "v", 1)
	e.put(r)
	r.Columns[0].Name = "changed"
	r.DependsOn[0] = 42
	got, _ := e.cat.ByID(3)
	if got.Columns[0].Name != "n" || got.DependsOn[0] != 1 {
		t.Fatalf("catalog changed with the caller's relation: columns %v, depends on %v", got.Columns, got.DependsOn)
	}
	got.Columns[0].Name = "changed again"
	if again, _ := e.cat.ByID(3); again.Columns[0].Name != "n" {
		t.Fatalf("changing a returned relation's columns changed the catalog: %v", again.Columns)
	}
}
