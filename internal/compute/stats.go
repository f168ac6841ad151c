package compute

import "github.com/sluice-db/sluice/internal/stream"

// ActorStat is one running actor's place and counters (metrics).
type ActorStat struct {
	Job, Fragment uint32
	Actor         stream.ActorID
	// Stats are the actor's live counters: read them, never write.
	Stats *stream.ActorStats
}

// ActorStats lists the node's actors with their counters, by job and
// actor. A dropped actor's counters go with it.
func (n *Node) ActorStats() []ActorStat {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]ActorStat, 0, len(n.mu.actors))
	for _, a := range n.mu.actors {
		out = append(out, ActorStat{Job: a.job, Fragment: a.fragment, Actor: a.id, Stats: &a.stats})
	}
	return out
}

// SetAmpLimit gives the actors of job the amplification limit (0: none).
func (n *Node) SetAmpLimit(job uint32, limit int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range n.mu.actors {
		if a.job == job {
			a.stats.AmpLimit.Store(limit)
		}
	}
}

// JobOf returns the job of a running actor.
func (n *Node) JobOf(id stream.ActorID) (uint32, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a, ok := n.mu.actors[id]
	if !ok {
		return 0, false
	}
	return a.job, true
}
