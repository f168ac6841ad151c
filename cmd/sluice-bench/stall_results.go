package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// stallResults is everything one drop-under-stall run measured.
type stallResults struct {
	reference           referenceResult
	immediate           []roundResult
	graceful            []gracefulResult
	gracefulUnavailable string
	recoveries          int
	loadStart, loadEnd  string // 1-minute load averages
}

func (res *stallResults) report(c stallConfig, in *instance) *report {
	r := &report{bench: "drop-under-stall"}
	store := "Pebble on disk in " + in.dir
	if c.engine.inMemory {
		store = "in memory"
	}
	r.context = [][2]string{
		{"machine", fmt.Sprintf("%s/%s, %d cores (GOMAXPROCS %d), %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())},
		{"load", fmt.Sprintf("1-minute load average %s at start, %s at end", res.loadStart, res.loadEnd)},
		{"engine", fmt.Sprintf("in-process, %s, barrier every %s, parallelism %s", store, c.engine.barrier, parallelismText(c.engine.parallelism))},
		{"workload", workloadText(c)},
		{"method", fmt.Sprintf("DROP sent over pgwire once the oldest in-flight barrier is ≥ %s; waits after it measured from the DROP, capped at %s; idle = ≤ %.2f cores over %s",
			c.stallThreshold(), c.settleCap, c.idleCPU, c.idleWindow)},
	}
	res.addDropMetrics(r, c)
	res.addSettleMetrics(r)
	res.addHeapMetrics(r)
	r.add(metric{key: "recoveries", label: "recoveries during the run", unit: "count", samples: []float64{float64(res.recoveries)}})
	return r
}

func workloadText(c stallConfig) string {
	rounds := fmt.Sprintf("%d immediate stalls, %d graceful (cap %s)", c.stalls, c.gracefulRuns, c.gracefulCap)
	if c.feed == "nexmark" {
		return fmt.Sprintf("an unpaced Nexmark bid source joined to t, %d rows with k = 1 (each bid joins all of them); %s", c.rows, rounds)
	}
	return fmt.Sprintf("issue 4's reference stall: %d rows with k = 1 (%d join rows); %s", c.rows, int64(c.rows)*int64(c.rows), rounds)
}

func parallelismText(p int) string {
	if p <= 0 {
		return fmt.Sprintf("%d (cores)", runtime.NumCPU())
	}
	return fmt.Sprint(p)
}

func (res *stallResults) addDropMetrics(r *report, c stallConfig) {
	var ages, pings, drops []time.Duration
	for _, x := range res.immediate {
		ages, pings, drops = append(ages, x.barrierAge), append(pings, x.ping), append(drops, x.drop)
	}
	r.add(metric{key: "barrier_latency_at_drop_ms", label: "barrier latency at DROP", unit: "ms", samples: millis(ages)})
	r.add(metric{key: "select1_during_stall_ms", label: "SELECT 1 during the stall", unit: "ms", samples: millis(pings)})
	for i, key := range []string{"alter_rate_limit_ms", "alter_pause_ms", "alter_resume_ms", "alter_rate_limit_default_ms"} {
		var ds []time.Duration
		for _, x := range res.immediate {
			ds = append(ds, x.control[i])
		}
		r.add(metric{key: key, label: strings.TrimPrefix(controlStatements[i], "ALTER MATERIALIZED VIEW amp "), unit: "ms", samples: millis(ds)})
	}
	r.add(metric{key: "drop_immediate_ms", label: "DROP latency, immediate", unit: "ms", samples: millis(drops)})
	g := res.gracefulMetric(c)
	r.add(g)
	for _, p := range []float64{50, 99} {
		r.add(ratioMetric(p, g, percentile(millis(drops), p)))
	}
}

func (res *stallResults) gracefulMetric(c stallConfig) metric {
	m := metric{key: "drop_graceful_ms", label: "DROP latency, graceful", unit: "ms",
		capAt: float64(c.gracefulCap) / float64(time.Millisecond)}
	for _, x := range res.graceful {
		m.samples = append(m.samples, float64(x.drop.d)/float64(time.Millisecond))
		if !x.drop.reached {
			m.capped++
		}
	}
	switch {
	case res.gracefulUnavailable != "":
		m.note = "unavailable: " + res.gracefulUnavailable
	case c.gracefulRuns == 0:
		m.note = "not run (-graceful-runs 0)"
	}
	return m
}

// ratioMetric is graceful/immediate at the p-th percentile; a capped
// graceful percentile makes it a lower bound.
func ratioMetric(p float64, g metric, immediate float64) metric {
	m := metric{key: fmt.Sprintf("drop_ratio_graceful_over_immediate_p%.0f", p),
		label: fmt.Sprintf("graceful / immediate, p%.0f", p), unit: "x"}
	gv := percentile(g.samples, p)
	if len(g.samples) == 0 || immediate <= 0 {
		m.note = "no graceful samples"
		return m
	}
	m.samples = []float64{gv / immediate}
	m.lowerBound = g.capped > 0 && gv >= g.capAt
	return m
}

func (res *stallResults) addSettleMetrics(r *report) {
	pick := []struct {
		key, label string
		get        func(roundResult) timing
	}{
		{"goroutines_baseline_ms", "goroutines back to baseline", func(x roundResult) timing { return x.goroutines }},
		{"cpu_idle_ms", "CPU idle", func(x roundResult) timing { return x.cpuIdle }},
		{"next_commit_ms", "next barrier commit", func(x roundResult) timing { return x.commit }},
		{"sibling_current_ms", "sibling current", func(x roundResult) timing { return x.sibling }},
	}
	for _, p := range pick {
		m := metric{key: p.key, label: p.label + " (after DROP)", unit: "ms"}
		for _, x := range res.immediate {
			t := p.get(x)
			m.samples = append(m.samples, float64(t.d)/float64(time.Millisecond))
			if !t.reached {
				m.capped++
				m.capAt = float64(t.d) / float64(time.Millisecond)
			}
		}
		r.add(m)
	}
	ref := res.reference.sibling
	m := metric{key: "sibling_current_no_amp_ms", label: "sibling current, no amp (after INSERT)", unit: "ms",
		samples: []float64{float64(ref.d) / float64(time.Millisecond)}}
	if !ref.reached {
		m.capped, m.capAt = 1, m.samples[0]
	}
	r.add(m)
}

func (res *stallResults) addHeapMetrics(r *report) {
	var before, after, ratio []float64
	for _, x := range res.immediate {
		before = append(before, mib(x.heapBefore))
		after = append(after, mib(x.heapAfter))
		ratio = append(ratio, float64(x.heapAfter)/float64(max(x.heapBefore, 1)))
	}
	r.add(metric{key: "heap_before_mib", label: "heap before the job (after GC)", unit: "MiB", samples: before})
	r.add(metric{key: "heap_after_mib", label: "heap after DROP (after GC)", unit: "MiB", samples: after})
	r.add(metric{key: "heap_after_over_before", label: "heap after / before", unit: "x", samples: ratio})
	r.add(metric{key: "heap_no_amp_mib", label: "heap, same rows without amp", unit: "MiB", samples: []float64{mib(res.reference.heap)}})
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
