package engine

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-db/sluice/internal/meta"
	"github.com/sluice-db/sluice/internal/meta/barrier"
)

// barrierStats is the coordinator's Observer: each committed epoch's
// barrier latency, split at the moment its last actor collected it, goes
// into histograms; the newest commit dates what every view reflects
// (freshness); recent keeps the last epochs for whoever wants them
// listed. Everything here runs once per epoch, never per row.
type barrierStats struct {
	latency, collect, commit prometheus.Histogram
	recoveries               *prometheus.CounterVec

	mu     sync.Mutex
	recent []meta.EpochTiming // the newest last, at most recentEpochs
}

// recentEpochs is how many committed epochs barrierStats keeps.
const recentEpochs = 128

// barrierBuckets span a fast epoch (a millisecond) to a stuck one
// (about nine minutes).
var barrierBuckets = prometheus.ExponentialBuckets(0.001, 2, 20)

func newBarrierStats() *barrierStats {
	h := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: barrierBuckets})
	}
	b := &barrierStats{
		latency: h("sluice_barrier_latency_seconds",
			"Each committed epoch's barrier, from its injection to its commit in the store."),
		collect: h("sluice_barrier_collect_seconds",
			"Each committed epoch's barrier, from its injection until its commit began: every actor had passed it and the older epochs were committed (a stuck job holds this part)."),
		commit: h("sluice_barrier_commit_seconds",
			"Each committed epoch's commit in the store, once every actor passed its barrier."),
		recoveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_recoveries_total",
			Help: "Recoveries of the streaming graph started, by reason (the process start is one)."}, []string{"reason"}),
	}
	for _, r := range []barrier.RecoveryReason{barrier.ReasonStartup, barrier.ReasonActorFailure,
		barrier.ReasonCommitFailure, barrier.ReasonRequested} {
		b.recoveries.WithLabelValues(string(r))
	}
	return b
}

// EpochCommitted implements meta.Observer.
func (b *barrierStats) EpochCommitted(t meta.EpochTiming) {
	if t.Injected.IsZero() {
		return
	}
	b.latency.Observe(t.Committed.Sub(t.Injected).Seconds())
	b.collect.Observe(t.Collected.Sub(t.Injected).Seconds())
	b.commit.Observe(t.Committed.Sub(t.Collected).Seconds())
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recent) == recentEpochs {
		copy(b.recent, b.recent[1:])
		b.recent = b.recent[:recentEpochs-1]
	}
	b.recent = append(b.recent, t)
}

// RecoveryStarted implements meta.Observer.
func (b *barrierStats) RecoveryStarted(reason barrier.RecoveryReason) {
	b.recoveries.WithLabelValues(string(reason)).Inc()
}

// newest returns the newest committed epoch's timing, false before the
// first commit.
func (b *barrierStats) newest() (meta.EpochTiming, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recent) == 0 {
		return meta.EpochTiming{}, false
	}
	return b.recent[len(b.recent)-1], true
}

// RecentEpochs returns the timings of the last committed epochs, oldest
// first.
func (e *Engine) RecentEpochs() []meta.EpochTiming {
	e.barriers.mu.Lock()
	defer e.barriers.mu.Unlock()
	return append([]meta.EpochTiming(nil), e.barriers.recent...)
}

// committedAge is how old the newest committed epoch is: now minus the
// time its barrier was injected, which is the time every view reflects.
// Before the first commit it is the time since the engine opened.
func (e *Engine) committedAge(now time.Time) time.Duration {
	if t, ok := e.barriers.newest(); ok {
		return now.Sub(t.Injected)
	}
	return now.Sub(e.opened)
}

func (b *barrierStats) collectors() []prometheus.Collector {
	return []prometheus.Collector{b.latency, b.collect, b.commit, b.recoveries}
}
