package barrier

import (
	"errors"
	"fmt"
)

// maybeCheckInvariants panics on a broken invariant when built with the
// invariants tag: a violation is a bug in this package, never bad input.
func (m *Machine) maybeCheckInvariants() {
	if !invariantsEnabled {
		return
	}
	if err := m.checkInvariants(); err != nil {
		panic(err)
	}
}

// checkInvariants reports the first broken invariant. Tests call it directly
// after every event.
func (m *Machine) checkInvariants() error {
	return errors.Join(m.checkEpochs(), m.checkTopology(), m.checkStopping())
}

func (m *Machine) checkEpochs() error {
	last := m.committed
	for i, e := range m.inflight {
		if e.epoch.Curr <= last {
			return fmt.Errorf("in-flight epoch %d not above %d", e.epoch.Curr, last)
		}
		last = e.epoch.Curr
		for a := range e.remaining {
			if e.collected.has(a) {
				return fmt.Errorf("epoch %d: actor %d both remaining and collected", e.epoch.Curr, a)
			}
			if _, ok := m.actorJob[a]; !ok {
				return fmt.Errorf("epoch %d waits for unknown actor %d", e.epoch.Curr, a)
			}
		}
		if i > 0 && e.epoch.Prev != m.inflight[i-1].epoch.Curr {
			return fmt.Errorf("epoch %d prev %d, want %d", e.epoch.Curr, e.epoch.Prev, m.inflight[i-1].epoch.Curr)
		}
	}
	for _, p := range m.pending {
		if p.epoch <= last {
			return fmt.Errorf("pending epoch %d not above %d", p.epoch, last)
		}
		last = p.epoch
	}
	if last > m.lastEpoch {
		return fmt.Errorf("epoch %d above last handed out %d", last, m.lastEpoch)
	}
	if m.committing && (len(m.inflight) == 0 || len(m.inflight[0].remaining) > 0) {
		return errors.New("committing an incomplete or missing epoch")
	}
	if m.phase == phaseRunning && len(m.inflight) > m.cfg.MaxInFlight {
		return fmt.Errorf("%d epochs in flight, max %d", len(m.inflight), m.cfg.MaxInFlight)
	}
	if m.phase == phaseRecovering && (len(m.inflight) > 0 || len(m.pending) > 0) {
		return errors.New("epochs in flight while recovering")
	}
	if m.phase == phaseDraining && (!m.committing || len(m.inflight) != 1) {
		return errors.New("draining without exactly one outstanding commit")
	}
	return nil
}

func (m *Machine) checkTopology() error {
	n := 0
	for id, j := range m.jobs {
		if id != j.ID || len(j.Actors) == 0 {
			return fmt.Errorf("job %d: bad entry %v", id, j)
		}
		for _, a := range j.Actors {
			if m.actorJob[a] != id {
				return fmt.Errorf("actor %d of job %d mapped to job %d", a, id, m.actorJob[a])
			}
		}
		n += len(j.Actors)
	}
	if n != len(m.actorJob) {
		return fmt.Errorf("%d actors in jobs, %d in index", n, len(m.actorJob))
	}
	for s := range m.sources {
		if _, ok := m.actorJob[s]; !ok {
			return fmt.Errorf("source %d is not an actor", s)
		}
	}
	return nil
}

// checkStopping: a stopping job is running, fed no more barriers, and
// stopped by one barrier only.
func (m *Machine) checkStopping() error {
	for j := range m.stopping {
		spec, ok := m.jobs[j]
		if !ok {
			return fmt.Errorf("stopping job %d is not in the topology", j)
		}
		for _, s := range spec.Sources {
			if m.sources.has(s) {
				return fmt.Errorf("source %d of stopping job %d still gets barriers", s, j)
			}
		}
	}
	seen := map[JobID]bool{}
	for _, p := range m.pending {
		if p.add != nil && len(p.stop) > 0 {
			return fmt.Errorf("pending epoch %d both adds and stops", p.epoch)
		}
		for _, j := range p.stop {
			if _, ok := m.jobs[j]; !ok || seen[j] {
				return fmt.Errorf("pending epoch %d stops job %d, not running or stopped twice", p.epoch, j)
			}
			if _, ok := m.stopping[j]; ok {
				return fmt.Errorf("pending epoch %d stops job %d, already stopping", p.epoch, j)
			}
			seen[j] = true
		}
	}
	return nil
}
