package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ddlStats times the engine's DDL and control statements by kind, and
// says whether each succeeded. A foreground CREATE MATERIALIZED VIEW
// includes its backfill; a DROP, its return (not the background deletion
// of its state).
type ddlStats struct{ duration *prometheus.HistogramVec }

func newDDLStats() *ddlStats {
	return &ddlStats{duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sluice_ddl_duration_seconds",
		Help:    "DDL and job control statements, from the engine's start of them to their return, by kind and result.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 22)}, []string{"kind", "result"})}
}

// observe records a statement of kind that started at start and ended
// with *err.
func (d *ddlStats) observe(kind string, start time.Time, err *error) {
	result := "ok"
	if *err != nil {
		result = "error"
	}
	d.duration.WithLabelValues(kind, result).Observe(time.Since(start).Seconds())
}
