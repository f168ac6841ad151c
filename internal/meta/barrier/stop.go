package barrier

import (
	"fmt"
	"slices"
	"time"
)

// ReasonStop is the Inject.Reason of a barrier scheduled by StopJobs.
const ReasonStop = "stop"

// StopJobs schedules the graceful stop of running jobs: a checkpoint
// barrier carrying Stop, injected like any requested barrier (at once if
// there is room in flight, else after the barriers already waiting). Its
// epoch still expects the jobs' actors, so their writes for it commit with
// it: that is the final epoch a sink flushes. From the next epoch on they
// are not expected and their sources get no barriers; they stay in the
// topology until the caller, having seen the epoch commit (the actors
// have exited), tears them down and calls DropActors, which deletes their
// state as for an immediate drop. The caller may give up waiting at any
// time and drop them at once instead: DropActors takes a job out of a
// Stop that has not been injected yet, and out of the expected set of a
// Stop that has.
//
// It returns the epoch of the Stop barrier. Jobs that are not running
// (unknown, or still waiting for their Add barrier: drop those at once)
// and jobs already stopping are refused, changing nothing.
func (m *Machine) StopJobs(now time.Time, jobs []JobID) (uint64, error) {
	defer m.maybeCheckInvariants()
	if m.phase != phaseRunning {
		return 0, fmt.Errorf("stop jobs: %w", ErrRecovering)
	}
	if err := m.checkStoppable(jobs); err != nil {
		return 0, err
	}
	// A barrier carries at most one mutation; share a waiting barrier only
	// if it has none.
	p := m.lastPending()
	if p == nil || p.hasMutation() {
		p = m.reserve(ReasonStop)
	} else {
		p.reason += "," + ReasonStop
	}
	p.stop = slices.Sorted(slices.Values(jobs))
	m.injectPending(now)
	return p.epoch, nil
}

func (m *Machine) checkStoppable(jobs []JobID) error {
	if len(jobs) == 0 {
		return fmt.Errorf("stop of no job: %w", ErrInvalidJob)
	}
	seen := map[JobID]bool{}
	for _, j := range jobs {
		if seen[j] {
			return fmt.Errorf("stop lists job %d twice: %w", j, ErrInvalidJob)
		}
		seen[j] = true
		if _, ok := m.jobs[j]; !ok {
			return fmt.Errorf("stop job %d: %w", j, ErrUnknownJob)
		}
		if m.isStopping(j) {
			return fmt.Errorf("stop job %d: %w", j, ErrJobStopping)
		}
	}
	return nil
}

// isStopping reports whether job's Stop barrier was injected or is
// waiting for room.
func (m *Machine) isStopping(job JobID) bool {
	if _, ok := m.stopping[job]; ok {
		return true
	}
	for _, p := range m.pending {
		if slices.Contains(p.stop, job) {
			return true
		}
	}
	return false
}

// stopMutation is the Stop of a pending barrier's jobs as they are now.
// DropActors takes dropped jobs out of p.stop, so every one is running.
func (m *Machine) stopMutation(jobs []JobID) Stop {
	s := Stop{Jobs: make([]JobSpec, 0, len(jobs))}
	for _, j := range jobs {
		s.Jobs = append(s.Jobs, m.jobs[j].clone())
	}
	return s
}

// becomeStopping runs right after a Stop barrier was injected with the
// jobs' actors expected and their sources fed: later barriers neither
// expect them nor go into their sources, since they exit after this one.
func (m *Machine) becomeStopping(s Stop, epoch uint64) {
	for _, j := range s.Jobs {
		m.stopping[j.ID] = epoch
		for _, src := range j.Sources {
			delete(m.sources, src)
		}
	}
}

// forgetStopping drops what StopJobs recorded for a job that has left the
// topology.
func (m *Machine) forgetStopping(job JobID) {
	delete(m.stopping, job)
	for _, p := range m.pending {
		p.stop = slices.DeleteFunc(p.stop, func(j JobID) bool { return j == job })
	}
}

// ResetActors takes a job's actors out of the topology like DropActors
// (out of every in-flight epoch, their uncommitted writes discarded) but
// keeps the job's state: the caller tears the actors down to rebuild the
// job (RECOVER MATERIALIZED VIEW) and adds it again, with new actors,
// through AddJob. No DeleteState is emitted. Like DropActors it is
// idempotent and refuses another job's actor.
func (m *Machine) ResetActors(job JobID, actors []ActorID) error {
	defer m.maybeCheckInvariants()
	return m.forgetActors(job, actors, false)
}
