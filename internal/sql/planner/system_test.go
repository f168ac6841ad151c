package planner

import (
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// TestSystemRelationBinding: sluice_catalog.name binds to a system scan
// with the relation's columns and key, reads no catalog relation (so no
// privilege applies), and mixes with tables; a streaming job cannot read
// one, no statement can write one, and an unknown one is 42P01.
func TestSystemRelationBinding(t *testing.T) {
	s := newSession(t)
	fixture(s)
	for _, rel := range engine.SystemRelations() {
		r, err := s.plan("SELECT * FROM sluice_catalog." + rel.Name)
		if err != nil {
			t.Fatalf("%s: %v", rel.Name, err)
		}
		q := r.(*Query)
		if !slices.Equal(q.Columns, rel.Columns) {
			t.Errorf("%s: columns %v, want %v", rel.Name, q.Columns, rel.Columns)
		}
		scan := findKind(q.Plan, plan.KindSystemScan)
		if scan == nil || scan.SystemScan.Relation != rel.Name || !slices.Equal(scan.StreamKey, rel.Key) {
			t.Errorf("%s: plan has no system scan of it with key %v", rel.Name, rel.Key)
		}
		if len(s.p.Reads()) != 0 {
			t.Errorf("%s: reads %v, want none", rel.Name, s.p.Reads())
		}
	}
	r, err := s.plan("SELECT t1.id, j.name FROM t1 JOIN sluice_catalog.jobs j ON t1.id = j.id WHERE j.status = 'running'")
	if err != nil {
		t.Fatal(err)
	}
	if findKind(r.(*Query).Plan, plan.KindSystemScan) == nil || findKind(r.(*Query).Plan, plan.KindBackfill) == nil {
		t.Fatal("join of a table and a system relation lost a side")
	}
	cases := []struct {
		sql  string
		code sqlerr.Code
		pos  int
	}{
		{"CREATE MATERIALIZED VIEW v AS SELECT * FROM sluice_catalog.jobs", sqlerr.FeatureNotSupported, 45},
		{"CREATE MATERIALIZED VIEW v AS SELECT id FROM t1 WHERE id IN (SELECT job_id FROM sluice_catalog.actors)", sqlerr.FeatureNotSupported, 81},
		{"INSERT INTO sluice_catalog.jobs (id) VALUES (1)", sqlerr.WrongObjectType, 13},
		{"UPDATE sluice_catalog.jobs SET paused = true", sqlerr.WrongObjectType, 8},
		{"SELECT * FROM sluice_catalog.nope", sqlerr.UndefinedTable, 15},
		{"SELECT * FROM jobs", sqlerr.UndefinedTable, 15},
	}
	for _, c := range cases {
		_, err := s.plan(c.sql)
		e, ok := sqlerr.As(err)
		if !ok || e.Code != c.code || e.Position != c.pos {
			t.Errorf("%s:\n got %v\nwant %s at %d", c.sql, err, c.code, c.pos)
		}
	}
}

// findKind returns the first node of kind k under n, depth first.
func findKind(n *plan.Node, k plan.Kind) *plan.Node {
	if n == nil || n.Kind == k {
		return n
	}
	for _, in := range n.Inputs {
		if f := findKind(in, k); f != nil {
			return f
		}
	}
	return nil
}
