package engine

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/stream"
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
		"Changed rows into a materialized view's materialize fragment (job: a view dropped gracefully and created again under its name is another job).",
		[]string{"view", "job"}, nil)
	joinAmpDesc = prometheus.NewDesc("sluice_join_matched_rows_per_probe",
		"How many rows each row probing a join's state matched (its amplification), per join fragment.",
		[]string{"job", "name", "fragment"}, nil)
	jobRowErrorsDesc = prometheus.NewDesc("sluice_job_row_errors_total",
		"Row-level expression errors a streaming job's running actors turned into NULL (it restarts with the actors).",
		[]string{"job", "name"}, nil)
	joinHeavyDesc = prometheus.NewDesc("sluice_join_heavy_key_matched_rows",
		"The most rows one probe row of a join key matched, for the keys of the most matches of late (per join fragment, up to five).",
		[]string{"job", "name", "fragment", "key"}, nil)
)

func (c *actorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{actorRowsInDesc, actorRowsOutDesc, actorInBlockDesc, actorOutBlockDesc, viewRowsDesc,
		joinAmpDesc, joinHeavyDesc, jobRowErrorsDesc} {
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
	viewRows := map[[2]string]int64{}
	rowErrs := map[[2]string]int64{}
	joins := map[[2]uint32]*joinFragment{}
	for _, a := range c.e.node.ActorStats() {
		for _, js := range a.Stats.Joins() {
			f := joins[[2]uint32{a.Job, a.Fragment}]
			if f == nil {
				f = &joinFragment{}
				joins[[2]uint32{a.Job, a.Fragment}] = f
			}
			f.add(js)
		}
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
		ch <- prometheus.MustNewConstMetric(actorInBlockDesc, prometheus.CounterValue, a.Stats.InputBlocked.Total().Seconds(), labels...)
		ch <- prometheus.MustNewConstMetric(actorOutBlockDesc, prometheus.CounterValue, a.Stats.OutputBlocked.Total().Seconds(), labels...)
		rowErrs[[2]string{labels[0], name}] += a.Stats.RowErrors.Load()
		if r != nil && r.Kind == catalog.KindMaterializedView && a.Fragment == r.Job.MaterializeFragment {
			viewRows[[2]string{r.Name, labels[0]}] += in
		}
	}
	for k, n := range viewRows {
		ch <- prometheus.MustNewConstMetric(viewRowsDesc, prometheus.CounterValue, float64(n), k[0], k[1])
	}
	for k, n := range rowErrs {
		ch <- prometheus.MustNewConstMetric(jobRowErrorsDesc, prometheus.CounterValue, float64(n), k[0], k[1])
	}
	for k, f := range joins {
		name := ""
		if r := byJob[k[0]]; r != nil {
			name = r.Name
		}
		f.collect(ch, strconv.FormatUint(uint64(k[0]), 10), name, strconv.FormatUint(uint64(k[1]), 10))
	}
}

// joinFragment sums the amplification of a join fragment's actors.
type joinFragment struct {
	buckets [stream.AmpBuckets]uint64
	sum     uint64
	heavy   []stream.HeavyKey
}

func (f *joinFragment) add(js *stream.JoinStats) {
	b, sum, heavy := js.Snapshot()
	for i, n := range b {
		f.buckets[i] += n
	}
	f.sum += sum
	for _, h := range heavy {
		f.heavy = stream.KeepHeavy(f.heavy, h)
	}
}

func (f *joinFragment) collect(ch chan<- prometheus.Metric, job, name, fragment string) {
	cum := map[float64]uint64{}
	var count uint64
	for i, n := range f.buckets {
		count += n
		if i < stream.AmpBuckets-1 { // the last bucket is +Inf's
			cum[stream.AmpBound(i)] = count
		}
	}
	ch <- prometheus.MustNewConstHistogram(joinAmpDesc, count, float64(f.sum), cum, job, name, fragment)
	for _, h := range f.heavy {
		ch <- prometheus.MustNewConstMetric(joinHeavyDesc, prometheus.GaugeValue, float64(h.Matches), job, name, fragment, h.Key)
	}
}
