package engine

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// TestInconsistentOpsWiring: a view's materialize is planned as a view's
// (so it reports inconsistencies) and a table's is not (its overwrites are
// by design); a report is counted, exported as
// sluice_stream_inconsistent_ops_total and logged with the view's name.
// That a real inconsistency reaches the counter is shown by the
// differential tests, which assert it stays 0.
func TestInconsistentOpsWiring(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var logs bytes.Buffer
	e, err := Open(ctx, Options{InMemory: true, BarrierInterval: 5 * time.Millisecond, Parallelism: 2, CheckInserts: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	must(t, err)
	defer func() { must(t, e.Close()) }()
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tab, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii, PK: []int{0}})
	must(t, err)
	b := newBuilder(ctx, e)
	view, err := e.CreateMaterializedView(ctx, b.view("v", b.scan(tab), []string{"k", "v"}))
	must(t, err)
	// The catalog's copy, decoded from what is on disk, is what recovery
	// deploys.
	for name, want := range map[string]bool{"t": false, "v": true} {
		rel, ok := e.Catalog().ByName(name)
		if !ok {
			t.Fatalf("no relation %s", name)
		}
		if got := rootMaterialize(t, rel).View; got != want {
			t.Errorf("%s: Materialize.View = %v, want %v", rel.Name, got, want)
		}
	}
	reg := prometheus.NewRegistry()
	must(t, e.RegisterMetrics(reg))
	if got := counterValue(t, reg, "sluice_stream_inconsistent_ops_total"); got != 0 {
		t.Fatalf("fresh engine: %v inconsistent ops", got)
	}
	for range inconsistentLogged + 3 {
		e.inconsistent.add(view.Table.ID, "delete of absent key", types.Row{int64(7)})
	}
	if got, want := e.InconsistentOps(), uint64(inconsistentLogged+3); got != want {
		t.Fatalf("InconsistentOps = %d, want %d", got, want)
	}
	if got := counterValue(t, reg, "sluice_stream_inconsistent_ops_total"); got != inconsistentLogged+3 {
		t.Fatalf("metric = %v", got)
	}
	lines := strings.Count(logs.String(), "stream inconsistency")
	if lines != inconsistentLogged || !strings.Contains(logs.String(), "view=v ") {
		t.Fatalf("%d warnings (want %d, naming view v):\n%s", lines, inconsistentLogged, logs.String())
	}
}

func rootMaterialize(t *testing.T, rel *catalog.Relation) *plan.Materialize {
	t.Helper()
	for _, f := range rel.Job.Plan.Fragments {
		if f.ID == rel.Job.MaterializeFragment && f.Root.Materialize != nil {
			return f.Root.Materialize
		}
	}
	t.Fatalf("%s: no materialize fragment", rel.Name)
	return nil
}

func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	must(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not exported", name)
	return 0
}
