//go:build unix

package engine

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// scrape is one gathering of a registry: each series' value (a
// histogram's count) by its name and labels, "name{k=v,…}" with the
// labels sorted.
type scrape map[string]float64

func gather(t *testing.T, reg *prometheus.Registry) scrape {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	s := scrape{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			s[f.GetName()+labelString(m.GetLabel())] = metricValue(m)
		}
	}
	return s
}

func labelString(ls []*dto.LabelPair) string {
	if len(ls) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// sum adds the series of name whose labels contain every one of with
// ("k=v").
func (s scrape) sum(name string, with ...string) float64 {
	var total float64
	for k, v := range s {
		if matches(k, name, with) {
			total += v
		}
	}
	return total
}

// has reports whether some series of name has every label of with.
func (s scrape) has(name string, with ...string) bool {
	for k := range s {
		if matches(k, name, with) {
			return true
		}
	}
	return false
}

// matches reports whether series key k is of name and has every label
// of with.
func matches(k, name string, with []string) bool {
	series, labels, _ := strings.Cut(k, "{")
	if series != name {
		return false
	}
	labels = "," + strings.TrimSuffix(labels, "}") + ","
	for _, w := range with {
		if !strings.Contains(labels, ","+w+",") {
			return false
		}
	}
	return true
}

// TestMetricsShowTheStall scrapes the engine's metrics through the
// reference stall (stall_e2e_test.go). Before it, epochs commit, the
// sibling view is fresh and the DDL and startup recovery are counted.
// During it, the oldest barrier's age and the sibling's freshness grow,
// and the actors feeding the stuck join wait on full channels. After amp
// is dropped, the sibling is fresh again.
func TestMetricsShowTheStall(t *testing.T) {
	s := newStall(t)
	reg := prometheus.NewRegistry()
	if err := s.e.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	s.insert(1, 100)
	s.baseline()
	before := gather(t, reg)
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"epochs committed", before.sum("sluice_barrier_latency_seconds") > 0 &&
			before.sum("sluice_barrier_collect_seconds") == before.sum("sluice_barrier_latency_seconds") &&
			before.sum("sluice_barrier_commit_seconds") == before.sum("sluice_barrier_latency_seconds")},
		{"the startup recovery, and no other", before.sum("sluice_recoveries_total", "reason=startup") == 1 &&
			before.sum("sluice_recoveries_total") == 1},
		{"sibling fresh", before.has("sluice_view_freshness_seconds", "view=sibling") &&
			before.sum("sluice_view_freshness_seconds", "view=sibling") < 5},
		{"sibling running", before.sum("sluice_job_status", "name=sibling", "status=running", "kind=materialized view") == 1},
		{"the view's DDL timed", before.sum("sluice_ddl_duration_seconds", "kind=create_materialized_view", "result=ok") == 1 &&
			before.sum("sluice_ddl_duration_seconds", "kind=create_table", "result=ok") == 1},
		{"t's rows counted", before.sum("sluice_actor_output_rows_total", "name=t") >= 100},
		{"state sizes", before.has("sluice_state_table_disk_bytes", "name=t") && before.has("sluice_state_table_disk_bytes", "name=sibling")},
	} {
		if !c.ok {
			t.Errorf("before the stall: %s: %v", c.what, before)
		}
	}

	amp := s.amp(true)
	s.insert(101, stallRows)
	s.stuck()
	first := gather(t, reg)
	time.Sleep(5 * stallInterval)
	second := gather(t, reg)
	f1, f2 := first.sum("sluice_view_freshness_seconds", "view=sibling"), second.sum("sluice_view_freshness_seconds", "view=sibling")
	if f1 < (10*stallInterval).Seconds() || f2 < f1+(4*stallInterval).Seconds() {
		t.Errorf("during the stall the sibling's freshness went %.2f s -> %.2f s, want it past %v and growing", f1, f2, 10*stallInterval)
	}
	if age := second.sum("sluice_barrier_oldest_in_flight_seconds"); age < f1 {
		t.Errorf("the oldest barrier in flight is %.2f s old, younger than the sibling's staleness %.2f s", age, f1)
	}
	// Creating or running: the stall may come during its background
	// backfill or after it.
	if second.sum("sluice_job_status", "name=amp", "status=creating")+second.sum("sluice_job_status", "name=amp", "status=running") != 1 {
		t.Errorf("amp's status: %v", second)
	}
	// The join's inputs are full: whoever feeds it waits.
	fed1 := first.sum("sluice_actor_output_blocked_seconds_total", "name=amp") + first.sum("sluice_actor_output_blocked_seconds_total", "name=t")
	fed2 := second.sum("sluice_actor_output_blocked_seconds_total", "name=amp") + second.sum("sluice_actor_output_blocked_seconds_total", "name=t")
	t.Logf("the actors feeding amp waited on output %.2f s in %v of the stall, %.2f s since it began %.2f s ago", fed2-fed1, 5*stallInterval, fed2, f2)
	if fed2-fed1 < (2*stallInterval).Seconds() || fed2 < f1/2 {
		t.Errorf("the actors feeding amp waited %.2f s on output over %v of the stall (%.2f s in all over %.2f s), want most of it",
			fed2-fed1, 5*stallInterval, fed2, f2)
	}

	// The join names its key (every row has k = 1) while no barrier
	// passes it: its rows report as they run. Before the stall its rows
	// matched at most 100; the stall's rows match more, up to 20 000.
	waitFor(t, "amp's heavy key 1 past 200 matches", func() bool {
		return gather(t, reg).sum("sluice_join_heavy_key_matched_rows", "name=amp", "key=1") > 200
	})
	// PAUSE lets the barriers overtake amp's work: sibling is fresh again
	// while amp's freshness shows it behind.
	s.timed("PAUSE amp", func() error { return s.e.SetPaused(s.ctx, amp.Name, true) })
	waitFor(t, "the sibling fresh again after PAUSE", func() bool {
		return gather(t, reg).sum("sluice_view_freshness_seconds", "view=sibling") < (5 * stallInterval).Seconds()
	})
	if f := gather(t, reg).sum("sluice_view_freshness_seconds", "view=amp"); f < (10 * stallInterval).Seconds() {
		t.Errorf("amp's freshness %.2f s while paused with overtaken work, want it behind", f)
	}
	s.timed("DROP amp", func() error { return s.e.Drop(s.ctx, amp.Name, false) })
	s.assertJobGone(amp)
	waitFor(t, "the sibling fresh after DROP", func() bool {
		return gather(t, reg).sum("sluice_view_freshness_seconds", "view=sibling") < (5 * stallInterval).Seconds()
	})
	after := gather(t, reg)
	if after.sum("sluice_ddl_duration_seconds", "kind=drop", "result=ok") != 1 || after.sum("sluice_recoveries_total") != 1 ||
		after.sum("sluice_ddl_duration_seconds", "kind=set_paused", "result=ok") != 1 {
		t.Errorf("after the drop: %v", after)
	}
}

// TestJoinAmplificationMetrics: a self-join of 71 rows of one key emits
// 71 × 71 pairs, each when the later of its two rows probes, so the
// histogram's sum is 5 041 over 142 probe rows, and the key shows as
// heavy with the most one probe row matched.
func TestJoinAmplificationMetrics(t *testing.T) {
	s := newStall(t)
	reg := prometheus.NewRegistry()
	if err := s.e.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	s.amp(false)
	s.insert(1, 70)
	if err := s.e.Flush(s.ctx); err != nil {
		t.Fatal(err)
	}
	s.insert(71, 71)
	if err := s.e.Flush(s.ctx); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var h *dto.Histogram
	for _, f := range fams {
		if f.GetName() == "sluice_join_matched_rows_per_probe" && len(f.GetMetric()) == 1 {
			h = f.GetMetric()[0].GetHistogram()
		}
	}
	if h == nil || h.GetSampleCount() != 142 || h.GetSampleSum() != 71*71 {
		t.Fatalf("amp's amplification: %v", h)
	}
	got := gather(t, reg)
	if m := got.sum("sluice_join_heavy_key_matched_rows", "name=amp", "key=1"); m < 70 || m > 71 {
		t.Errorf("heavy key 1: %v matches, want 70 or 71 (%v)", m, got)
	}
}
