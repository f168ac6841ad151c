package engine

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RegisterMetrics exports the engine's counters and the barrier manager's
// state. Values are read at scrape time; nothing on the data path pays
// for them.
func (e *Engine) RegisterMetrics(reg prometheus.Registerer) error {
	status := func() (s struct {
		inflight, committed float64
		oldest, lastCommit  float64
	}) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err := e.coord.Status(ctx)
		if err != nil {
			return s
		}
		s.inflight = float64(st.Barrier.InFlight)
		s.committed = float64(st.Barrier.Committed)
		s.oldest = st.Barrier.OldestInFlightAge.Seconds()
		s.lastCommit = st.Barrier.LastCommitLatency.Seconds()
		return s
	}
	cs := []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sluice_stream_row_errors_total",
			Help: "Row-level expression errors inside streaming jobs, turned into NULL."}, func() float64 { return float64(e.RowErrors()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sluice_stream_inconsistent_ops_total",
			Help: "Changes a materialized view received that contradict its rows (delete of an absent key or a different row, insert of a present key); applied tolerantly, each is an upstream bug."},
			func() float64 { return float64(e.InconsistentOps()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_barrier_in_flight",
			Help: "Barriers injected and not yet committed."}, func() float64 { return status().inflight }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_barrier_oldest_in_flight_seconds",
			Help: "Age of the oldest barrier in flight (the barrier latency a stuck job causes)."}, func() float64 { return status().oldest }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_barrier_last_commit_latency_seconds",
			Help: "Inject-to-commit latency of the last committed epoch."}, func() float64 { return status().lastCommit }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_committed_epoch",
			Help: "The last committed epoch."}, func() float64 { return status().committed }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_committed_epoch_age_seconds",
			Help: "Time since the newest committed epoch's barrier was injected: how stale the freshest state any view shows is."},
			func() float64 { return e.committedAge(time.Now()).Seconds() }),
		&jobCollector{e: e}, &actorCollector{e: e},
	}
	cs = append(cs, e.barriers.collectors()...)
	cs = append(cs, e.ddl.duration, e.guard.actions)
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
