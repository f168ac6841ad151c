package engine

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/compute"
	"github.com/sluice-db/sluice/internal/meta"
	"github.com/sluice-db/sluice/internal/meta/barrier"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
)

// The dashboard's reads (internal/web). Like the metrics, they are taken
// when asked, from the catalog, the coordinator's status and the actors'
// live counters; nothing on the data path pays for them, and none waits
// for a barrier: a stuck one is what the dashboard must show.

// Overview is the state of the barriers and every streaming job at Now.
type Overview struct {
	Now     time.Time
	Barrier barrier.Status
	// CommittedAge is now minus the injection time of the newest
	// committed epoch (committedAge); Recoveries counts rebuilds.
	CommittedAge time.Duration
	Recoveries   int
	// Epochs are the last committed epochs, oldest first.
	Epochs []meta.EpochTiming
	Jobs   []JobSummary
}

// JobSummary is one streaming job: of a table, materialized view or sink.
type JobSummary struct {
	ID         uint32 // the relation's id, which is its job's
	Name       string
	Kind       catalog.Kind
	Status     string // creating, running, paused or dropping (jobStatus)
	Definition string
	// Freshness is now minus the time of the newest epoch the relation
	// reflects, for a created one (as sluice_view_freshness_seconds);
	// negative while it is being created.
	Freshness time.Duration
	// Progress is the backfill's, in percent, while it is creating
	// (JobInfo.Progress).
	Progress float64
	Control  catalog.JobControl
	// RowsOut counts the rows the job's last fragments emitted (its
	// changes), so far: its rate between two reads is its throughput.
	RowsOut int64
	// Fragments are the job's fragments with their counters.
	Fragments []FragmentStats
}

// JobDetail is one job's streaming graph with its counters: its
// fragments (in the summary), the fragments of other jobs it reads from,
// the exchanges between them all, and the amplification of its joins.
type JobDetail struct {
	JobSummary
	Upstreams []FragmentStats
	Edges     []ExchangeEdge
	Joins     []JoinAmplification
}

// FragmentStats is a fragment and its actors' counters, summed.
type FragmentStats struct {
	ID uint32
	// Job and Name are the job the fragment belongs to: another one for
	// an Upstream fragment.
	Job      uint32
	Name     string
	Upstream bool
	// Operators lists the fragment's executors, its root first.
	Operators []string
	// Inputs says the fragment receives from exchanges. One that does
	// not (a source's) has no input waits: its idle time is not counted.
	Inputs bool
	Actors int
	// RowsIn and RowsOut count rows received from exchanges and sent;
	// InputBlocked and OutputBlocked the time the actors waited for input
	// and for room downstream (backpressure), all summed over the actors.
	RowsIn, RowsOut             int64
	InputBlocked, OutputBlocked time.Duration
}

// ExchangeEdge is an exchange from fragment From to fragment To.
type ExchangeEdge struct {
	From, To uint32
	Kind     plan.DispatchKind
}

// JoinAmplification is a join fragment's matched rows per probe row,
// summed over its actors (stream.JoinStats).
type JoinAmplification struct {
	Fragment uint32
	// Buckets[i] counts probe rows that matched at most stream.AmpBound(i)
	// rows (and more than the bound before); the last bucket is unbounded.
	Buckets [stream.AmpBuckets]uint64
	// Matched is the sum of the rows every probe row matched.
	Matched uint64
	Heavy   []stream.HeavyKey
}

// AmpSummary is a join's amplification in numbers: its probe rows and
// the upper bounds of the buckets holding the median, the 99th percentile
// and the heaviest probe row (the heaviest key's matches when known).
type AmpSummary struct {
	Probes        uint64
	P50, P99, Max float64
}

// Summary sums j's buckets into its AmpSummary.
func (j JoinAmplification) Summary() AmpSummary {
	var heaviest int64
	for _, h := range j.Heavy {
		heaviest = max(heaviest, h.Matches)
	}
	var a AmpSummary
	last := -1
	for i, n := range j.Buckets {
		a.Probes += n
		if n > 0 {
			last = i
		}
	}
	a.P50 = stream.AmpQuantile(j.Buckets, a.Probes, 0.5, heaviest)
	a.P99 = stream.AmpQuantile(j.Buckets, a.Probes, 0.99, heaviest)
	if last >= 0 {
		a.Max = stream.AmpBucketBound(last, heaviest)
	}
	if heaviest > 0 {
		a.Max = float64(heaviest)
	}
	return a
}

// Overview reads the barriers' state and lists every streaming job. ctx
// bounds the wait for the coordinator's status, which answers while
// barriers are stuck.
func (e *Engine) Overview(ctx context.Context) (Overview, error) {
	st, err := e.coord.Status(ctx)
	if err != nil {
		return Overview{}, err
	}
	now := time.Now()
	o := Overview{Now: now, Barrier: st.Barrier, Recoveries: st.Recoveries,
		CommittedAge: e.committedAge(now), Epochs: e.RecentEpochs()}
	o.Jobs = e.jobSummaries(now, e.node.ActorStats())
	return o, nil
}

// JobDetail returns the job of relation id with its graph; false if no
// streaming job has that id.
func (e *Engine) JobDetail(id uint32) (JobDetail, bool) {
	r, ok := e.catalog.ByID(id)
	if !ok || r.Job.ID == 0 || r.Job.Plan == nil {
		return JobDetail{}, false
	}
	actors := e.node.ActorStats()
	now := time.Now()
	d := JobDetail{JobSummary: e.jobSummary(r, e.ViewFreshness(now), e.committedAge(now), actors)}
	d.Upstreams, d.Edges = e.jobGraph(r, actors)
	d.Joins = jobJoins(r.Job.ID, actors)
	return d, true
}

// jobSummary summarizes r's job; a view's freshness is from fresh
// (ViewFreshness), another job's is the committed epoch's age.
func (e *Engine) jobSummary(r *catalog.Relation, fresh map[uint32]time.Duration, age time.Duration, actors []compute.ActorStat) JobSummary {
	s := JobSummary{ID: r.ID, Name: r.Name, Kind: r.Kind, Status: jobStatus(r), Definition: r.Definition,
		Freshness: -1, Control: r.Job.Control}
	switch r.State {
	case catalog.StateCreated:
		s.Freshness = age
		if f, ok := fresh[r.ID]; ok {
			s.Freshness = f
		}
	case catalog.StateCreating:
		scanned, done, _ := e.node.JobProgress(r.ID)
		s.Progress = progressPercent(scanned, e.backfillTotal(r), done)
	}
	for _, f := range r.Job.Plan.Fragments {
		s.Fragments = append(s.Fragments, FragmentStats{ID: f.ID, Job: r.Job.ID, Name: r.Name,
			Operators: operators(f.Root), Inputs: receives(f.Root)})
	}
	addCounters(s.Fragments, actors)
	for i, f := range r.Job.Plan.Fragments {
		if len(f.Outputs) == 0 {
			s.RowsOut += s.Fragments[i].RowsOut
		}
	}
	return s
}

// addCounters adds to each of frags its actors' counters.
func addCounters(frags []FragmentStats, actors []compute.ActorStat) {
	byID := map[uint32]*FragmentStats{}
	for i := range frags {
		byID[frags[i].ID] = &frags[i]
	}
	for _, a := range actors {
		if f := byID[a.Fragment]; f != nil && f.Job == a.Job {
			f.Actors++
			f.RowsIn += a.Stats.RowsIn.Load()
			f.RowsOut += a.Stats.RowsOut.Load()
			f.InputBlocked += a.Stats.InputBlocked.Total()
			f.OutputBlocked += a.Stats.OutputBlocked.Total()
		}
	}
}

// jobGraph lists the fragments of other jobs r reads, and the exchanges
// between all the fragments.
func (e *Engine) jobGraph(r *catalog.Relation, actors []compute.ActorStat) ([]FragmentStats, []ExchangeEdge) {
	var ups []FragmentStats
	var edges []ExchangeEdge
	for _, f := range r.Job.Plan.Fragments {
		for _, o := range f.Outputs {
			edges = append(edges, ExchangeEdge{From: f.ID, To: o.Downstream, Kind: o.Kind})
		}
	}
	seen := map[uint32]bool{}
	for _, u := range r.Job.Plan.Upstreams {
		edges = append(edges, ExchangeEdge{From: u.UpstreamFragment, To: u.Downstream, Kind: u.Kind})
		if !seen[u.UpstreamFragment] {
			seen[u.UpstreamFragment] = true
			ups = append(ups, e.upstreamFragment(u))
		}
	}
	addCounters(ups, actors)
	return ups, edges
}

// upstreamFragment describes the fragment of another job that edge u
// reads: the materialize fragment of the table or view with u's table.
func (e *Engine) upstreamFragment(u plan.UpstreamEdge) FragmentStats {
	f := FragmentStats{ID: u.UpstreamFragment, Upstream: true, Operators: []string{string(plan.KindMaterialize)}}
	for _, r := range e.catalog.All() {
		if r.Table.ID == u.TableID {
			f.Job, f.Name = r.Job.ID, r.Name
			if r.Job.Plan != nil {
				if uf := r.Job.Plan.Fragment(u.UpstreamFragment); uf != nil {
					f.Operators, f.Inputs = operators(uf.Root), receives(uf.Root)
				}
			}
		}
	}
	return f
}

// operators lists the executors of the tree under n, depth first, once
// per kind in a row ("merge" twice under a join stays twice).
func operators(n *plan.Node) []string {
	var out []string
	var walk func(n *plan.Node)
	walk = func(n *plan.Node) {
		if n == nil {
			return
		}
		k := strings.ReplaceAll(string(n.Kind), "_", " ")
		if n.Kind == plan.KindHashJoin && n.HashJoin != nil {
			k = strings.ToLower(string(n.HashJoin.Type)) + " join"
		}
		out = append(out, k)
		for _, in := range n.Inputs {
			walk(in)
		}
	}
	walk(n)
	return out
}

// receives reports whether the tree under n reads an exchange.
func receives(n *plan.Node) bool {
	if n == nil {
		return false
	}
	if n.Kind == plan.KindMerge {
		return true
	}
	for _, in := range n.Inputs {
		if receives(in) {
			return true
		}
	}
	return false
}

// jobJoins sums the amplification of job's join fragments.
func jobJoins(job uint32, actors []compute.ActorStat) []JoinAmplification {
	byFrag := map[uint32]*JoinAmplification{}
	for _, a := range actors {
		if a.Job != job {
			continue
		}
		for _, js := range a.Stats.Joins() {
			j := byFrag[a.Fragment]
			if j == nil {
				j = &JoinAmplification{Fragment: a.Fragment}
				byFrag[a.Fragment] = j
			}
			b, sum, heavy := js.Snapshot()
			for i, n := range b {
				j.Buckets[i] += n
			}
			j.Matched += sum
			for _, h := range heavy {
				j.Heavy = stream.KeepHeavy(j.Heavy, h)
			}
		}
	}
	out := make([]JoinAmplification, 0, len(byFrag))
	for _, j := range byFrag {
		out = append(out, *j)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fragment < out[j].Fragment })
	return out
}
