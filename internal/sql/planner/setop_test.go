package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// TestUnionChainPlan: a chain of UNION ALLs is one union of all its
// operands, keyed by the branch number plus shared slots (one per key type
// any branch needs), not one slot per branch. Nested, 1 000 operands
// took 10 s and 3 000 took four minutes.
func TestUnionChainPlan(t *testing.T) {
	s := newSession(t)
	fixture(s)
	branches := []string{"SELECT id FROM t1", "SELECT id FROM t2", "SELECT k::int FROM t3"}
	var chain []string
	for i := range 60 {
		chain = append(chain, branches[i%3])
	}
	v := s.planView("CREATE MATERIALIZED VIEW u60 AS " + strings.Join(chain, " UNION ALL "))
	u := find(v.Spec.Plan, plan.KindUnion)
	if u == nil || len(u.Inputs) != 60 {
		t.Fatalf("union of 60: %+v", u)
	}
	// The branch number, an int slot (t1's id) and a bigint one (t2's
	// _row_id and t3's k, shared).
	if len(u.StreamKey) != 3 {
		t.Errorf("union key %v over schema %v", u.StreamKey, u.Schema)
	}
	if got := s.query("SELECT count(*) FROM (" + strings.Join(chain, " UNION ALL ") + ") u"); got[0] != "200" {
		t.Errorf("u60 has %q rows, want 200", got)
	}

	// A sorted or limited operand, and a UNION under a UNION ALL, stay
	// operands of their own.
	for sql, inputs := range map[string]int{
		"(SELECT id FROM t1 UNION ALL SELECT id FROM t2 ORDER BY 1 LIMIT 1) UNION ALL SELECT id FROM t1": 2,
		"SELECT id FROM t1 UNION SELECT id FROM t2 UNION ALL SELECT id FROM t1":                          2,
		"SELECT id FROM t1 UNION ALL SELECT id FROM t2 UNION SELECT id FROM t1":                          3,
		"SELECT id FROM t1 UNION ALL (SELECT id FROM t2 UNION ALL SELECT id FROM t1)":                    3,
	} {
		v := s.planView("CREATE MATERIALIZED VIEW m AS " + sql)
		if u := find(v.Spec.Plan, plan.KindUnion); len(u.Inputs) != inputs {
			t.Errorf("%s: top union has %d inputs, want %d", sql, len(u.Inputs), inputs)
		}
	}
}

// TestUnionChainTypes: a chain's column types are resolved over all its
// operands, whichever comes first.
func TestUnionChainTypes(t *testing.T) {
	s := newSession(t)
	got := s.query("SELECT 1 AS x UNION ALL SELECT 2.5 UNION ALL SELECT 3 ORDER BY 1")
	if want := []string{"1", "2.5", "3"}; !slices.Equal(got, want) {
		t.Errorf("int, numeric, int: %q, want %q", got, want)
	}
	err := s.try("SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 'a'::text")
	if se, ok := sqlerr.As(err); !ok || se.Code != sqlerr.DatatypeMismatch {
		t.Errorf("int, int, text: %v, want 42804", err)
	}
}

// planView plans a CREATE MATERIALIZED VIEW without running it.
func (s *session) planView(sql string) *CreateView {
	s.t.Helper()
	r, err := s.plan(sql)
	if err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
	return r.(*CreateView)
}
