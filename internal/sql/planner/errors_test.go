package planner

import (
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

func TestErrors(t *testing.T) {
	s := newSession(t)
	fixture(s)
	s.exec("CREATE TABLE log (x int) APPEND ONLY")
	cases := []struct {
		sql  string
		code sqlerr.Code
		pos  int
	}{
		{"SELECT nope FROM t1", sqlerr.UndefinedColumn, 8},
		{"SELECT t1.id FROM t1 JOIN t2 ON t1.id = t2.id WHERE id > 1", sqlerr.AmbiguousColumn, 53},
		{"SELECT * FROM missing", sqlerr.UndefinedTable, 15},
		{"SELECT x.id FROM t1", sqlerr.UndefinedTable, 8},
		{"SELECT id + name FROM t2", sqlerr.UndefinedFunction, 11},
		{"SELECT id FROM t1 WHERE v", sqlerr.DatatypeMismatch, 25},
		{"SELECT CASE WHEN true THEN 1 ELSE true END", sqlerr.DatatypeMismatch, 35},
		{"SELECT 'abc'::int", sqlerr.InvalidTextRepresentation, 8},
		{"SELECT g, v FROM t1 GROUP BY g", sqlerr.GroupingError, 11},
		{"SELECT id FROM t1 WHERE sum(v) > 1", sqlerr.GroupingError, 25},
		{"SELECT * FROM t1 GROUP BY g", sqlerr.GroupingError, 8},
		{"SELECT * FROM t2 GROUP BY id", sqlerr.GroupingError, 8},
		{"SELECT t1.v FROM t1 JOIN t3 ON t1.id = t3.k GROUP BY t3.k", sqlerr.GroupingError, 8},
		{"SELECT *, count(*) FROM t2", sqlerr.GroupingError, 8},
		{"SELECT sum(name) FROM t2", sqlerr.UndefinedFunction, 8},
		{"CREATE TABLE bad (a int, a int)", "42701", 26},
		{"CREATE TABLE bad (a widget)", sqlerr.UndefinedObject, 21},
		{"CREATE MATERIALIZED VIEW cj AS SELECT * FROM t1 CROSS JOIN t2", sqlerr.FeatureNotSupported, 46},
		{"CREATE MATERIALIZED VIEW nj AS SELECT * FROM t1 JOIN t2 ON t1.id < t2.id", sqlerr.FeatureNotSupported, 46},
		{"CREATE MATERIALIZED VIEW dup AS SELECT id, id FROM t1", "42701", 0},
		{"CREATE MATERIALIZED VIEW wide (a, b, c, d) AS SELECT * FROM t1", sqlerr.SyntaxError, 0},
		{"DELETE FROM log", sqlerr.FeatureNotSupported, 13},
		{"UPDATE log SET x = 1", sqlerr.FeatureNotSupported, 8},
		{"UPDATE t1 SET (g, v) = (1, 2, 3)", sqlerr.SyntaxError, 24},
		{"INSERT INTO t1 (id, g, v) VALUES (1, 2)", sqlerr.SyntaxError, 24},
		{"INSERT INTO t1 VALUES (1, 2, 3, 4)", sqlerr.SyntaxError, 33},
		{"INSERT INTO t1 VALUES (1, 2), (3)", sqlerr.SyntaxError, 32},
		{"INSERT INTO t1 (id, v) SELECT 1, 2, 3", sqlerr.SyntaxError, 0},
		{"INSERT INTO t1 (id, nope) VALUES (1, 2)", sqlerr.UndefinedColumn, 21},
		{"INSERT INTO t1 VALUES (1, true, 3)", sqlerr.DatatypeMismatch, 27},
		{"INSERT INTO t1 VALUES (1 / 0, 1, 1)", sqlerr.DivisionByZero, 24},
		{"SELECT id FROM t1 UNION SELECT name FROM t2", sqlerr.DatatypeMismatch, 0},
		{"SELECT id FROM t1 ORDER BY 3", sqlerr.InvalidColumnReference, 28},
		// A scalar subquery that may return several rows runs in a batch
		// query, but a view refuses it.
		{"CREATE MATERIALIZED VIEW sv AS SELECT id, (SELECT name FROM t2 WHERE id = 1) FROM t1", sqlerr.FeatureNotSupported, 43},
		{"CREATE MATERIALIZED VIEW sc AS SELECT id, (SELECT name FROM t2 WHERE t2.id = t1.id) FROM t1", sqlerr.FeatureNotSupported, 0},
		{"SELECT (SELECT id, name FROM t2)", sqlerr.SyntaxError, 8},
		{"SELECT name COLLATE \"en_US\" FROM t2", sqlerr.FeatureNotSupported, 13},
		{"SELECT id COLLATE \"C\" FROM t2", sqlerr.DatatypeMismatch, 11},
	}
	for _, c := range cases {
		_, err := s.plan(c.sql)
		e, ok := sqlerr.As(err)
		if !ok || e.Code != c.code || e.Position != c.pos {
			t.Errorf("%s:\n got %v (%#v)\nwant %s at %d", c.sql, err, e, c.code, c.pos)
		}
	}
	if err := s.try("DELETE FROM log"); err == nil || err.Error() != "append-only table does not support update or delete" {
		t.Errorf("append-only delete: %v", err)
	}
}

// TestPlanShapes checks the stream plans' keys and state tables.
func TestPlanShapes(t *testing.T) {
	s := newSession(t)
	fixture(s)
	view := func(sql string) *CreateView {
		t.Helper()
		r, err := s.plan(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return r.(*CreateView)
	}

	// A table without a primary key carries its hidden _row_id through the
	// projection; the view's PK is that hidden column.
	v := view("CREATE MATERIALIZED VIEW p AS SELECT name FROM t2")
	if len(v.Spec.Columns) != 2 || !v.Spec.Columns[1].Hidden || v.Spec.Columns[1].Type != types.TInt64 ||
		!slices.Equal(v.Spec.PK, []int{1}) {
		t.Errorf("projection view: columns %+v pk %v", v.Spec.Columns, v.Spec.PK)
	}

	// A join's key is both sides' keys; its side tables start with the
	// join key and are distributed by it; outer sides get degree tables.
	v = view("CREATE MATERIALIZED VIEW j AS SELECT t2.name FROM t1 LEFT JOIN t2 ON t1.id = t2.id")
	j := find(v.Spec.Plan, plan.KindHashJoin)
	if j == nil || j.HashJoin.LeftDegreeTable == nil || j.HashJoin.RightDegreeTable != nil {
		t.Fatalf("left join plan: %+v", j)
	}
	if len(j.StreamKey) != 2 || !slices.Equal(j.HashJoin.LeftTable.DistKey, j.HashJoin.LeftKeys) ||
		j.HashJoin.LeftTable.PK[0] != j.HashJoin.LeftKeys[0] {
		t.Errorf("join keys %v, left table %+v", j.StreamKey, j.HashJoin.LeftTable)
	}
	if len(v.Spec.PK) != 2 || len(v.Spec.Columns) != 3 {
		t.Errorf("join view pk %v columns %+v", v.Spec.PK, v.Spec.Columns)
	}

	// Every state table has a distinct, fresh id.
	seen := map[uint32]bool{}
	for _, tab := range stateTables(v.Spec.Plan) {
		if tab.ID == 0 || seen[tab.ID] {
			t.Errorf("state table id %d repeated or unassigned", tab.ID)
		}
		seen[tab.ID] = true
	}

	// Every node kind's tables are given ids: a window's too (it once
	// kept id 0, shared by every window of every view).
	v = view("CREATE MATERIALIZED VIEW w AS SELECT g, rank() OVER (PARTITION BY g ORDER BY id) FROM t1")
	if ow := find(v.Spec.Plan, plan.KindOverWindow); ow == nil || ow.OverWindow.Table.ID == 0 || seen[ow.OverWindow.Table.ID] {
		t.Errorf("over window plan %+v", ow)
	}

	// Mixed key types are cast to their common type below the join.
	v = view("CREATE MATERIALIZED VIEW c AS SELECT t3.label FROM t1 JOIN t3 ON t1.id = t3.k")
	j = find(v.Spec.Plan, plan.KindHashJoin)
	lt, rt := j.Inputs[0].Schema[j.HashJoin.LeftKeys[0]], j.Inputs[1].Schema[j.HashJoin.RightKeys[0]]
	if lt != types.TInt64 || rt != types.TInt64 {
		t.Errorf("join key types %s, %s", lt, rt)
	}

	// A grouped view is keyed by its group keys; top-N's table by order
	// then stream key.
	v = view("CREATE MATERIALIZED VIEW a AS SELECT g, count(*) FROM t1 GROUP BY g")
	if !slices.Equal(v.Spec.PK, []int{0}) || v.Spec.Columns[1].Name != "count" {
		t.Errorf("agg view pk %v columns %+v", v.Spec.PK, v.Spec.Columns)
	}
	v = view("CREATE MATERIALIZED VIEW tn AS SELECT id, v FROM t1 ORDER BY v DESC LIMIT 2")
	tn := find(v.Spec.Plan, plan.KindTopN)
	if tn == nil || !slices.Equal(tn.TopN.Table.PK, []int{1, 0}) || !tn.TopN.Table.Orders[0].Desc || tn.TopN.Limit != 2 {
		t.Errorf("top-N %+v", tn)
	}
	// ORDER BY without LIMIT is not planned in a view.
	v = view("CREATE MATERIALIZED VIEW o AS SELECT id FROM t1 ORDER BY v")
	if find(v.Spec.Plan, plan.KindTopN) != nil {
		t.Errorf("ORDER BY without LIMIT planned a top-N")
	}
	if !slices.Equal(v.Spec.DependsOn, []uint32{mustRel(s, "t1")}) {
		t.Errorf("depends on %v", v.Spec.DependsOn)
	}
}

func mustRel(s *session, name string) uint32 {
	r, ok := s.e.Catalog().ByName(name)
	if !ok {
		s.t.Fatalf("no relation %s", name)
	}
	return r.ID
}

func find(n *plan.Node, k plan.Kind) *plan.Node {
	if n.Kind == k {
		return n
	}
	for _, in := range n.Inputs {
		if f := find(in, k); f != nil {
			return f
		}
	}
	return nil
}
