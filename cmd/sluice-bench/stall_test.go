package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestDropUnderStallSmoke runs the whole benchmark with tiny numbers so
// CI exercises it end to end. It asserts that the run completes and that
// the values are sane, never how fast anything was.
func TestDropUnderStallSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"drop-under-stall", "-data-dir", t.TempDir(), "-stalls", "2", "-rows", "2000",
		"-graceful-runs", "1", "-graceful-cap", "2s", "-barrier-interval-ms", "50",
		"-settle-cap", "5s", "-idle-cpu", "0.5", "-parallelism", "2"}
	if code := dispatch(ctx, args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	t.Log(out.String())
	got := parseMetrics(t, out.String())
	for _, key := range []string{"barrier_latency_at_drop_ms", "select1_during_stall_ms", "drop_immediate_ms", "goroutines_baseline_ms",
		"cpu_idle_ms", "next_commit_ms", "sibling_current_ms", "heap_before_mib", "heap_after_mib",
		"alter_rate_limit_ms", "alter_pause_ms", "alter_resume_ms", "alter_rate_limit_default_ms"} {
		if m := got[key]; m.N != 2 || m.P50 == nil || *m.P50 <= 0 || *m.P99 < *m.P50 {
			t.Errorf("%s = %+v, want 2 positive samples", key, m)
		}
	}
	// The DROP was sent only once a barrier had been stuck for 3 intervals.
	if m := got["barrier_latency_at_drop_ms"]; m.P50 != nil && *m.P50 < 150 {
		t.Errorf("barrier latency at drop %v ms, below the 150 ms threshold", *m.P50)
	}
	g := got["drop_graceful_ms"]
	if g.Unavailable == "" && (g.N != 1 || g.P50 == nil || *g.P50 <= 0 || *g.P50 > 2000) {
		t.Errorf("graceful = %+v: want one sample within the cap, or a reason", g)
	}
	if r := got["recoveries"]; r.P50 == nil || *r.P50 < 0 {
		t.Errorf("recoveries = %+v", r)
	}
	if !strings.Contains(out.String(), "DROP latency, immediate") {
		t.Errorf("no table in the output:\n%s", out.String())
	}
}

// TestDropUnderStallNexmarkSmoke is the same with a Nexmark bid source
// feeding the stuck join: the source job is throttled, paused, resumed
// and dropped while its barrier is stuck, and sibling comes back.
func TestDropUnderStallNexmarkSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"drop-under-stall", "-feed", "nexmark", "-data-dir", t.TempDir(), "-stalls", "2", "-rows", "2000",
		"-graceful-runs", "0", "-barrier-interval-ms", "50", "-settle-cap", "5s", "-idle-cpu", "0.5", "-parallelism", "2"}
	if code := dispatch(ctx, args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	t.Log(out.String())
	got := parseMetrics(t, out.String())
	for _, key := range []string{"barrier_latency_at_drop_ms", "drop_immediate_ms", "alter_rate_limit_ms", "alter_pause_ms",
		"alter_resume_ms", "sibling_current_ms", "next_commit_ms"} {
		if m := got[key]; m.N != 2 || m.P50 == nil || *m.P50 <= 0 || *m.P99 < *m.P50 {
			t.Errorf("%s = %+v, want 2 positive samples", key, m)
		}
	}
	if !strings.Contains(out.String(), "Nexmark bid source") {
		t.Errorf("the workload does not name the feed:\n%s", out.String())
	}
}

func parseMetrics(t *testing.T, out string) map[string]jsonMetric {
	t.Helper()
	return parseBenchMetrics(t, "drop-under-stall", out)
}

// parseBenchMetrics reads the JSON lines of bench's output by metric.
func parseBenchMetrics(t *testing.T, bench, out string) map[string]jsonMetric {
	t.Helper()
	got := map[string]jsonMetric{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "{") {
			var j jsonMetric
			if err := json.Unmarshal([]byte(line), &j); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if j.Bench != bench {
				t.Fatalf("line for bench %q", j.Bench)
			}
			got[j.Metric] = j
		}
	}
	return got
}
