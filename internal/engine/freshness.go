package engine

import (
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
)

// ViewFreshness returns each created materialized view's freshness by
// relation id: now minus the time of the newest input it reflects. That
// is the committed epoch's age, unless the view's job, or a job it reads
// from, holds input a barrier overtook while it was paused or throttled
// (stream.ActorStats.BehindSince): then the view reflects its input only as of
// when that work began to wait, and other views stay fresh.
func (e *Engine) ViewFreshness(now time.Time) map[uint32]time.Duration {
	age := e.committedAge(now)
	behind := map[uint32]int64{} // job → earliest Behind of its actors
	for _, a := range e.node.ActorStats() {
		if b := a.Stats.BehindSince(); b != 0 {
			if cur, ok := behind[a.Job]; !ok || b < cur {
				behind[a.Job] = b
			}
		}
	}
	rels := map[uint32]*catalog.Relation{}
	for _, r := range e.catalog.All() {
		rels[r.ID] = r
	}
	memo := map[uint32]int64{}
	out := map[uint32]time.Duration{}
	for _, r := range rels {
		if r.Kind != catalog.KindMaterializedView || r.State != catalog.StateCreated {
			continue
		}
		f := age
		if b := earliestBehind(r.ID, rels, behind, memo); b != 0 {
			f = max(f, now.Sub(time.Unix(0, b)))
		}
		out[r.ID] = f
	}
	return out
}

// earliestBehind is the earliest Behind of id's job and the jobs it reads
// from, transitively (0: none).
func earliestBehind(id uint32, rels map[uint32]*catalog.Relation, behind map[uint32]int64, memo map[uint32]int64) int64 {
	if b, ok := memo[id]; ok {
		return b
	}
	memo[id] = 0 // a cycle cannot happen; this guards the walk anyway
	r := rels[id]
	if r == nil {
		return 0
	}
	b := behind[r.Job.ID]
	for _, d := range r.DependsOn {
		if u := earliestBehind(d, rels, behind, memo); u != 0 && (b == 0 || u < b) {
			b = u
		}
	}
	memo[id] = b
	return b
}
