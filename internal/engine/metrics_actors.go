package engine

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-db/sluice/internal/catalog"
)

// actorCollector exports, at each scrape, every running actor's rows and
// waits (stream.ActorStats), and per materialized view the rows into its
// materialize fragment, whose rate is the view's rows per second.
type actorCollector struct{ e *Engine }

var (
	actorLabels       = []string{"job", "name", "fragment", "actor"}
	actorRowsInDesc   = prometheus.NewDesc("sluice_actor_input_rows_total", "Rows an actor received from its exchange inputs.", actorLabels, nil)
	actorRowsOutDesc  = prometheus.NewDesc("sluice_actor_output_rows_total", "Rows an actor sent on.", actorLabels, nil)
	actorInBlockDesc  = prometheus.NewDesc("sluice_actor_input_blocked_seconds_total", "Time an actor waited for input from its upstream actors.", actorLabels, nil)
	actorOutBlockDesc = prometheus.NewDesc("sluice_actor_output_blocked_seconds_total",
		"Time an actor waited for room in a full channel to a downstream actor (backpressure).", actorLabels, nil)
	viewRowsDesc = prometheus.NewDesc("sluice_view_rows_total",
		"Changed rows into a materialized view's materialize fragment.", []string{"view"}, nil)
)

func (c *actorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{actorRowsInDesc, actorRowsOutDesc, actorInBlockDesc, actorOutBlockDesc, viewRowsDesc} {
		ch <- d
	}
}

func (c *actorCollector) Collect(ch chan<- prometheus.Metric) {
	byJob := map[uint32]*catalog.Relation{}
	for _, r := range c.e.catalog.All() {
		if r.Job.ID != 0 {
			byJob[r.Job.ID] = r
		}
	}
	viewRows := map[string]int64{}
	for _, a := range c.e.node.ActorStats() {
		name := ""
		r := byJob[a.Job]
		if r != nil {
			name = r.Name
		}
		labels := []string{strconv.FormatUint(uint64(a.Job), 10), name,
			strconv.FormatUint(uint64(a.Fragment), 10), strconv.FormatUint(uint64(a.Actor), 10)}
		in := a.Stats.RowsIn.Load()
		ch <- prometheus.MustNewConstMetric(actorRowsInDesc, prometheus.CounterValue, float64(in), labels...)
		ch <- prometheus.MustNewConstMetric(actorRowsOutDesc, prometheus.CounterValue, float64(a.Stats.RowsOut.Load()), labels...)
		ch <- prometheus.MustNewConstMetric(actorInBlockDesc, prometheus.CounterValue, seconds(a.Stats.InputBlocked.Load()), labels...)
		ch <- prometheus.MustNewConstMetric(actorOutBlockDesc, prometheus.CounterValue, seconds(a.Stats.OutputBlocked.Load()), labels...)
		if r != nil && r.Kind == catalog.KindMaterializedView && a.Fragment == r.Job.MaterializeFragment {
			viewRows[r.Name] += in
		}
	}
	for view, n := range viewRows {
		ch <- prometheus.MustNewConstMetric(viewRowsDesc, prometheus.CounterValue, float64(n), view)
	}
}

func seconds(nanos int64) float64 { return time.Duration(nanos).Seconds() }
