package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/engine"
)

// describing is a Registerer that keeps every collector it registers, so
// a test can list the metrics they describe, with samples or not.
type describing struct {
	prometheus.Registerer
	cs []prometheus.Collector
}

func (d *describing) Register(c prometheus.Collector) error {
	d.cs = append(d.cs, c)
	return d.Registerer.Register(c)
}

// metricNames lists the series names /metrics can serve: each described
// metric's, and a histogram's _bucket, _sum and _count besides.
func metricNames(t *testing.T) map[string]bool {
	e, err := engine.Open(context.Background(), engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	d := &describing{Registerer: prometheus.NewRegistry()}
	if err := registerMetrics(d, e, batch.NewMemoryPool(1<<20)); err != nil {
		t.Fatal(err)
	}
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	names := map[string]bool{}
	ch := make(chan *prometheus.Desc, 1024)
	for _, c := range d.cs {
		c.Describe(ch)
	}
	close(ch)
	for desc := range ch {
		m := fqName.FindStringSubmatch(desc.String())
		if m == nil {
			t.Fatalf("no name in %s", desc)
		}
		for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
			names[m[1]+suffix] = true
		}
	}
	return names
}

// TestGrafanaDashboardNamesRealMetrics: every panel of the dashboard
// under deploy/grafana queries something, and every Sluice metric its
// queries name is one the server registers.
func TestGrafanaDashboardNamesRealMetrics(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/sluice.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("deploy/grafana/sluice.json: %v", err)
	}
	if len(dash.Panels) == 0 {
		t.Fatal("the dashboard has no panels")
	}
	names := metricNames(t)
	named := regexp.MustCompile(`\bsluice_[a-z0-9_]+`)
	used := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range named.FindAllString(tg.Expr, -1) {
				used++
				if !names[m] {
					t.Errorf("panel %q names %s, which the server does not register", p.Title, m)
				}
			}
		}
	}
	if used == 0 {
		t.Fatal("the dashboard names no Sluice metric")
	}
	if !strings.Contains(string(raw), "sluice_view_freshness_seconds") {
		t.Error("the dashboard does not show the views' freshness")
	}
}
