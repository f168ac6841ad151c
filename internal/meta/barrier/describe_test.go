package barrier

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// describe dumps every piece of the machine's state, times relative to base.
// Tests compare dumps to prove that an event returning an error changed
// nothing, and the `state` command prints it.
func (m *Machine) describe(base time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s committed=%d last-epoch=%d prev=%d committing=%t since-checkpoint=%d last-inject=%s cause=%v\n",
		m.phase, m.committed, m.lastEpoch, m.prevInjected, m.committing, m.sinceCheckpoint, m.lastInjectAt.Sub(base), m.cause)
	ids := make([]JobID, 0, len(m.jobs))
	for id := range m.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		j := m.jobs[id]
		fmt.Fprintf(&b, "%s\n", JobSpec{ID: j.ID, Actors: sortedCopy(j.Actors), Sources: sortedCopy(j.Sources)})
	}
	for _, e := range m.inflight {
		fmt.Fprintf(&b, "in-flight %s checkpoint=%t mutation=%v injected=%s remaining=%s collected=%s\n",
			e.epoch, e.checkpoint, e.mutation, e.injectedAt.Sub(base), formatActors(e.remaining.sorted()), formatActors(e.collected.sorted()))
	}
	for _, p := range m.pending {
		add := "none"
		if p.add != nil {
			add = p.add.String()
		}
		stop := ""
		if len(p.stop) > 0 {
			stop = fmt.Sprintf(" stop=%v", p.stop)
		}
		fmt.Fprintf(&b, "pending e=%d add=%s%s reason=%s\n", p.epoch, add, stop, p.reason)
	}
	if len(m.stopping) > 0 {
		jobs := make([]JobID, 0, len(m.stopping))
		for j := range m.stopping {
			jobs = append(jobs, j)
		}
		slices.Sort(jobs)
		for _, j := range jobs {
			fmt.Fprintf(&b, "stopping job=%d stop-epoch=%d\n", j, m.stopping[j])
		}
	}
	if m.droppedInRecovery != nil {
		fmt.Fprintf(&b, "dropped-in-recovery=%s\n", formatActors(m.droppedInRecovery.sorted()))
	}
	fmt.Fprintf(&b, "sources=%s outbox=%d latency=%s", formatActors(m.sources.sorted()), len(m.out), m.lastCommitLatency)
	return b.String()
}
