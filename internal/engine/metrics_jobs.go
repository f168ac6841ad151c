package engine

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-db/sluice/internal/catalog"
)

// jobCollector exports, at each scrape, every streaming job's status, the
// progress of those still being created, and every materialized view's
// freshness, read from the catalog: nothing on the data path pays for
// them.
type jobCollector struct{ e *Engine }

var (
	jobStatusDesc = prometheus.NewDesc("sluice_job_status",
		"1 for each streaming job, labelled with its relation, kind and status (creating, running, paused, dropping).",
		[]string{"job", "name", "kind", "status"}, nil)
	jobProgressDesc = prometheus.NewDesc("sluice_job_backfill_progress_ratio",
		"How much of its upstream rows a job still being created has read, from 0 to 1.",
		[]string{"job", "name"}, nil)
	stateBytesDesc = prometheus.NewDesc("sluice_state_table_disk_bytes",
		"Estimated bytes of a state table's rows in the store's files (memtables not counted), by the job that owns it.",
		[]string{"job", "name", "table"}, nil)
	viewFreshnessDesc = prometheus.NewDesc("sluice_view_freshness_seconds",
		"Now minus the time of the newest input a materialized view reflects: the committed epoch's age, or more while its job or one it reads from holds input a barrier overtook (paused or throttled).",
		[]string{"view"}, nil)
)

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobStatusDesc
	ch <- jobProgressDesc
	ch <- viewFreshnessDesc
	ch <- stateBytesDesc
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	fresh := e.ViewFreshness(time.Now())
	for _, r := range e.catalog.All() {
		if r.Job.ID == 0 {
			continue // a source: no job
		}
		job := strconv.FormatUint(uint64(r.Job.ID), 10)
		ch <- prometheus.MustNewConstMetric(jobStatusDesc, prometheus.GaugeValue, 1, job, r.Name, string(r.Kind), jobStatus(r))
		if f, ok := fresh[r.ID]; ok {
			ch <- prometheus.MustNewConstMetric(viewFreshnessDesc, prometheus.GaugeValue, f.Seconds(), r.Name)
		}
		c.stateSizes(ch, r, job)
	}
	for _, j := range e.Jobs() {
		job := strconv.FormatUint(uint64(j.ID), 10)
		ch <- prometheus.MustNewConstMetric(jobProgressDesc, prometheus.GaugeValue, j.Progress/100, job, j.Name)
	}
}

// stateSizes sends the estimated size of each state table of r's job.
func (c *jobCollector) stateSizes(ch chan<- prometheus.Metric, r *catalog.Relation, job string) {
	seen := map[uint32]bool{}
	for _, id := range append([]uint32{r.Table.ID}, r.Job.StateTables...) {
		if id == 0 || seen[id] {
			continue
		}
		seen[id] = true
		n, err := c.e.store.TableDiskBytes(id)
		if err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(stateBytesDesc, prometheus.GaugeValue, float64(n), job, r.Name,
			strconv.FormatUint(uint64(id), 10))
	}
}

// jobStatus is a job's status as SHOW JOBS and the metrics name it.
func jobStatus(r *catalog.Relation) string {
	switch {
	case r.State == catalog.StateCreating:
		return "creating"
	case r.State == catalog.StateDropping:
		return "dropping"
	case r.Job.Control.Paused:
		return "paused"
	}
	return "running"
}
