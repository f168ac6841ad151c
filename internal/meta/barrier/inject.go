package barrier

import (
	"fmt"
	"time"
)

// Reasons a barrier was injected; they show in Inject.Reason.
const (
	ReasonTick     = "tick"
	ReasonRecovery = "recovery"
	ReasonAddJob   = "add-job"
)

// Tick is the periodic clock event. It injects requested barriers that were
// waiting for room, then a periodic barrier if Interval has passed since
// the last injection and there is room in flight.
func (m *Machine) Tick(now time.Time) {
	defer m.maybeCheckInvariants()
	if m.phase != phaseRunning {
		return
	}
	m.injectPending(now)
	// A requested barrier still waiting means there is no room; periodic
	// barriers never overtake it, or its reserved epoch would go backwards.
	if len(m.pending) > 0 || !m.hasRoom() {
		return
	}
	if now.Sub(m.lastInjectAt) < m.cfg.Interval {
		return
	}
	m.sinceCheckpoint++
	checkpoint := m.sinceCheckpoint >= m.cfg.CheckpointEvery
	m.inject(now, m.allocEpoch(), checkpoint, nil, ReasonTick)
}

// RequestBarrier asks for a checkpoint barrier injected after this call,
// e.g. for FLUSH, and returns its epoch: once a CommitDone for that epoch
// (or a later one) is reported, everything written before the request is
// committed; an AbortEpochs below it means it never will be. The barrier is
// injected now if there is room; otherwise it waits, and further requests
// share it, since any barrier injected after a request serves it.
func (m *Machine) RequestBarrier(now time.Time, reason string) (uint64, error) {
	defer m.maybeCheckInvariants()
	if m.phase != phaseRunning {
		return 0, fmt.Errorf("request barrier (%s): %w", reason, ErrRecovering)
	}
	p := m.lastPending()
	if p == nil {
		p = m.reserve(reason)
	} else {
		p.reason += "," + reason
	}
	m.injectPending(now)
	return p.epoch, nil
}

// AddJob schedules the barrier that starts job: it carries Mutation Add,
// goes into the job's sources as well as every existing source, and from it
// on the job's actors are expected to collect every barrier. It returns that
// barrier's epoch; once it commits, the job has started. The actors must be
// built and waiting for their first barrier before the Inject is performed.
func (m *Machine) AddJob(now time.Time, job JobSpec) (uint64, error) {
	defer m.maybeCheckInvariants()
	if m.phase != phaseRunning {
		return 0, fmt.Errorf("add job %d: %w", job.ID, ErrRecovering)
	}
	if err := job.validate(); err != nil {
		return 0, err
	}
	if err := m.checkNewJob(job); err != nil {
		return 0, err
	}
	// A barrier carries at most one mutation; share a waiting barrier only
	// if it has none.
	p := m.lastPending()
	if p == nil || p.hasMutation() {
		p = m.reserve(ReasonAddJob)
	} else {
		p.reason += "," + ReasonAddJob
	}
	spec := job.clone()
	p.add = &spec
	m.injectPending(now)
	return p.epoch, nil
}

// checkNewJob refuses a job whose id or actors are already known, running
// or waiting for their Add barrier.
func (m *Machine) checkNewJob(job JobSpec) error {
	if _, ok := m.jobs[job.ID]; ok {
		return fmt.Errorf("job %d: %w", job.ID, ErrJobExists)
	}
	for _, a := range job.Actors {
		if j, ok := m.actorJob[a]; ok {
			return fmt.Errorf("actor %d already in job %d: %w", a, j, ErrJobExists)
		}
	}
	for _, p := range m.pending {
		if p.add == nil {
			continue
		}
		if p.add.ID == job.ID {
			return fmt.Errorf("job %d is already being added: %w", job.ID, ErrJobExists)
		}
		for _, a := range job.Actors {
			if newActorSet(p.add.Actors...).has(a) {
				return fmt.Errorf("actor %d already in job %d: %w", a, p.add.ID, ErrJobExists)
			}
		}
	}
	return nil
}

func (m *Machine) hasRoom() bool { return len(m.inflight) < m.cfg.MaxInFlight }

func (m *Machine) lastPending() *pendingBarrier {
	if len(m.pending) == 0 {
		return nil
	}
	return m.pending[len(m.pending)-1]
}

// allocEpoch hands out a fresh epoch, above every epoch ever used.
func (m *Machine) allocEpoch() uint64 {
	m.lastEpoch++
	return m.lastEpoch
}

func (m *Machine) reserve(reason string) *pendingBarrier {
	p := &pendingBarrier{epoch: m.allocEpoch(), reason: reason}
	m.pending = append(m.pending, p)
	return p
}

// injectPending injects waiting requested barriers while there is room.
func (m *Machine) injectPending(now time.Time) {
	for m.phase == phaseRunning && len(m.pending) > 0 && m.hasRoom() {
		p := m.pending[0]
		m.pending = m.pending[1:]
		var mut Mutation
		switch {
		case p.add != nil:
			m.addToTopology(*p.add)
			mut = Add{Job: *p.add}
		case len(p.stop) > 0:
			mut = m.stopMutation(p.stop)
		}
		m.inject(now, p.epoch, true, mut, p.reason)
	}
}

// inject puts epoch in flight with the current topology as its expected
// set and emits the Inject. An epoch with nothing to collect is complete at
// once, so it may commit right away.
func (m *Machine) inject(now time.Time, epoch uint64, checkpoint bool, mut Mutation, reason string) {
	if checkpoint {
		m.sinceCheckpoint = 0
	}
	e := &inflightEpoch{
		epoch:      Epoch{Curr: epoch, Prev: m.prevInjected},
		checkpoint: checkpoint,
		mutation:   mut,
		injectedAt: now,
		remaining:  m.allActors(),
		collected:  newActorSet(),
	}
	m.prevInjected = epoch
	m.lastInjectAt = now
	m.inflight = append(m.inflight, e)
	m.emit(Inject{
		Epoch:      e.epoch,
		Time:       now,
		Checkpoint: checkpoint,
		Mutation:   mut,
		Reason:     reason,
		Sources:    m.sources.sorted(),
		Expected:   e.remaining.sorted(),
	})
	if s, ok := mut.(Stop); ok {
		m.becomeStopping(s, epoch)
	}
	m.maybeCommit()
}

// allActors is the expected set of a new epoch: every actor of the
// topology except those of stopping jobs, which exit after their Stop.
func (m *Machine) allActors() actorSet {
	s := make(actorSet, len(m.actorJob))
	for a, j := range m.actorJob {
		if _, stopping := m.stopping[j]; !stopping {
			s[a] = struct{}{}
		}
	}
	return s
}

func (m *Machine) addToTopology(job JobSpec) {
	m.jobs[job.ID] = job
	for _, a := range job.Actors {
		m.actorJob[a] = job.ID
	}
	for _, s := range job.Sources {
		m.sources[s] = struct{}{}
	}
}
