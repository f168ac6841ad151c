package web

import (
	"slices"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/stream"
)

// The API's JSON. Times are Unix milliseconds, durations seconds (as
// floats), counters running totals: the page takes rates as differences
// between two polls.

type overview struct {
	NowMS            int64     `json:"now_ms"`
	PasswordRequired bool      `json:"password_required"`
	Barrier          barrierJS `json:"barrier"`
	Epochs           []epochJS `json:"epochs"`
	Jobs             []jobJS   `json:"jobs"`
}

type barrierJS struct {
	// LatencySeconds is the barrier latency now: the age of the oldest
	// barrier in flight when it is older than the last commit's latency
	// (a stuck barrier's latency grows before it commits), else that.
	LatencySeconds           float64 `json:"latency_seconds"`
	LastCommitLatencySeconds float64 `json:"last_commit_latency_seconds"`
	OldestInFlightSeconds    float64 `json:"oldest_in_flight_seconds"`
	InFlight                 int     `json:"in_flight"`
	CommittedEpoch           uint64  `json:"committed_epoch"`
	CommittedAgeSeconds      float64 `json:"committed_age_seconds"`
	Recovering               bool    `json:"recovering"`
	Recoveries               int     `json:"recoveries"`
}

type epochJS struct {
	Epoch          uint64  `json:"epoch"`
	Checkpoint     bool    `json:"checkpoint"`
	InjectedMS     int64   `json:"injected_ms"`
	CommittedMS    int64   `json:"committed_ms"`
	LatencySeconds float64 `json:"latency_seconds"`
	CollectSeconds float64 `json:"collect_seconds"`
}

type jobJS struct {
	ID         uint32 `json:"id"`
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	Definition string `json:"definition"`
	// FreshnessSeconds is null while the job is being created;
	// Progress (percent) is null unless it is.
	FreshnessSeconds *float64 `json:"freshness_seconds"`
	Progress         *float64 `json:"progress"`
	RateLimit        *int64   `json:"rate_limit"`
	AmpLimit         int64    `json:"amplification_limit"`
	AmpAction        string   `json:"amplification_action"`
	RowsOut          int64    `json:"rows_out"`
	// Waits are the job's fragments' wait counters, from which the page
	// tells a busy job from one that waits.
	Waits []waitsJS `json:"waits"`
}

type waitsJS struct {
	Fragment uint32 `json:"fragment"`
	// Inputs: the fragment receives from exchanges (a source's does not,
	// and has no input waits).
	Inputs               bool    `json:"inputs"`
	Actors               int     `json:"actors"`
	InputBlockedSeconds  float64 `json:"input_blocked_seconds"`
	OutputBlockedSeconds float64 `json:"output_blocked_seconds"`
}

type detail struct {
	jobJS
	Fragments []fragmentJS `json:"fragments"`
	Edges     []edgeJS     `json:"edges"`
	Joins     []joinJS     `json:"joins"`
}

type fragmentJS struct {
	ID        uint32   `json:"id"`
	Job       uint32   `json:"job"`
	Name      string   `json:"name"`
	Upstream  bool     `json:"upstream"`
	Operators []string `json:"operators"`
	Actors    int      `json:"actors"`
	RowsIn    int64    `json:"rows_in"`
	RowsOut   int64    `json:"rows_out"`
	waitsJS
}

type edgeJS struct {
	From uint32 `json:"from"`
	To   uint32 `json:"to"`
	Kind string `json:"kind"`
}

type joinJS struct {
	Fragment  uint32 `json:"fragment"`
	ProbeRows uint64 `json:"probe_rows"`
	Matched   uint64 `json:"matched_rows"`
	// P50, P99 and Max are upper bounds: the bound of the histogram
	// bucket the quantile falls in (Max: the heaviest key's matches when
	// it is known).
	P50     float64    `json:"p50"`
	P99     float64    `json:"p99"`
	Max     float64    `json:"max"`
	Buckets []bucketJS `json:"buckets"`
	Heavy   []heavyJS  `json:"heavy_keys"`
}

type bucketJS struct {
	// UpTo is the most matches a probe row of the bucket had; null for
	// the last, unbounded bucket.
	UpTo  *float64 `json:"up_to"`
	Count uint64   `json:"count"`
}

type heavyJS struct {
	Key     string `json:"key"`
	Matches int64  `json:"matches"`
}

func seconds(d time.Duration) float64 { return d.Seconds() }

func overviewJSON(o engine.Overview, passwordRequired bool) overview {
	b := o.Barrier
	last := b.LastCommitLatency
	if n := len(o.Epochs); n > 0 { // the observer's timing, as the chart's
		last = o.Epochs[n-1].Committed.Sub(o.Epochs[n-1].Injected)
	}
	out := overview{NowMS: o.Now.UnixMilli(), PasswordRequired: passwordRequired,
		Barrier: barrierJS{
			LatencySeconds:           seconds(max(last, b.OldestInFlightAge)),
			LastCommitLatencySeconds: seconds(last),
			OldestInFlightSeconds:    seconds(b.OldestInFlightAge),
			InFlight:                 b.InFlight, CommittedEpoch: b.Committed,
			CommittedAgeSeconds: seconds(o.CommittedAge), Recovering: b.Recovering, Recoveries: o.Recoveries},
		Epochs: make([]epochJS, 0, len(o.Epochs)), Jobs: make([]jobJS, 0, len(o.Jobs))}
	for _, e := range o.Epochs {
		out.Epochs = append(out.Epochs, epochJS{Epoch: e.Epoch, Checkpoint: e.Checkpoint,
			InjectedMS: e.Injected.UnixMilli(), CommittedMS: e.Committed.UnixMilli(),
			LatencySeconds: seconds(e.Committed.Sub(e.Injected)), CollectSeconds: seconds(e.Collected.Sub(e.Injected))})
	}
	for _, j := range o.Jobs {
		out.Jobs = append(out.Jobs, summaryJSON(j))
	}
	return out
}

func summaryJSON(j engine.JobSummary) jobJS {
	out := jobJS{ID: j.ID, Name: j.Name, Kind: string(j.Kind), Status: j.Status, Definition: j.Definition,
		RateLimit: j.Control.RateLimit, AmpLimit: j.Control.AmpLimit, AmpAction: j.Control.AmpAction,
		RowsOut: j.RowsOut, Waits: make([]waitsJS, 0, len(j.Fragments))}
	if j.Freshness >= 0 {
		f := seconds(j.Freshness)
		out.FreshnessSeconds = &f
	}
	if j.Status == "creating" {
		p := j.Progress
		out.Progress = &p
	}
	for _, f := range j.Fragments {
		out.Waits = append(out.Waits, waitsOf(f))
	}
	return out
}

func waitsOf(f engine.FragmentStats) waitsJS {
	return waitsJS{Fragment: f.ID, Inputs: f.Inputs, Actors: f.Actors,
		InputBlockedSeconds: seconds(f.InputBlocked), OutputBlockedSeconds: seconds(f.OutputBlocked)}
}

func detailJSON(d engine.JobDetail) detail {
	out := detail{jobJS: summaryJSON(d.JobSummary), Fragments: make([]fragmentJS, 0, len(d.Fragments)+len(d.Upstreams)),
		Edges: make([]edgeJS, 0, len(d.Edges)), Joins: make([]joinJS, 0, len(d.Joins))}
	for _, f := range slices.Concat(d.Upstreams, d.Fragments) {
		out.Fragments = append(out.Fragments, fragmentJS{ID: f.ID, Job: f.Job, Name: f.Name, Upstream: f.Upstream,
			Operators: f.Operators, Actors: f.Actors, RowsIn: f.RowsIn, RowsOut: f.RowsOut, waitsJS: waitsOf(f)})
	}
	for _, e := range d.Edges {
		out.Edges = append(out.Edges, edgeJS{From: e.From, To: e.To, Kind: string(e.Kind)})
	}
	for _, j := range d.Joins {
		out.Joins = append(out.Joins, joinJSON(j))
	}
	return out
}

func joinJSON(j engine.JoinAmplification) joinJS {
	a := j.Summary()
	out := joinJS{Fragment: j.Fragment, Matched: j.Matched, Heavy: make([]heavyJS, 0, len(j.Heavy)),
		ProbeRows: a.Probes, P50: a.P50, P99: a.P99, Max: a.Max}
	for _, h := range j.Heavy {
		out.Heavy = append(out.Heavy, heavyJS{Key: h.Key, Matches: h.Matches})
	}
	for i, n := range j.Buckets {
		b := bucketJS{Count: n}
		if i < stream.AmpBuckets-1 {
			up := stream.AmpBound(i)
			b.UpTo = &up
		}
		out.Buckets = append(out.Buckets, b)
	}
	return out
}
