package barrier

import (
	"fmt"
	"time"
)

// ActorFailed reports that an actor stopped with an error that is not a
// requested stop. The graph is rebuilt from the last committed checkpoint:
// StartRecovery and AbortEpochs are emitted (after the outstanding Commit,
// if any, is answered) and nothing is injected until RecoveryDone.
//
// An actor that is not in the topology is ignored with ErrUnknownActor: a
// dropped actor exiting, even with an error, must never cost a recovery.
// While already recovering every failure is ignored: the rebuild replaces
// every actor anyway.
func (m *Machine) ActorFailed(actor ActorID, cause error) error {
	defer m.maybeCheckInvariants()
	if m.phase != phaseRunning {
		return nil
	}
	if _, ok := m.actorJob[actor]; !ok {
		return fmt.Errorf("actor %d failed (%v): %w", actor, cause, ErrUnknownActor)
	}
	m.beginRecovery(ReasonActorFailure, fmt.Errorf("actor %d: %w", actor, cause))
	return nil
}

// beginRecovery drops every epoch that can no longer commit. If a Commit is
// outstanding, its epoch was complete and the store may be writing it right
// now, so the recovery point is not known until the performer answers:
// wait for that (draining) before announcing the recovery.
func (m *Machine) beginRecovery(reason RecoveryReason, cause error) {
	m.pending = nil
	m.droppedInRecovery = newActorSet()
	if m.committing {
		// Younger epochs are lost either way; say so now, so that their
		// waiters fail fast and their late collections are expected to be
		// refused.
		m.inflight = m.inflight[:1]
		m.phase = phaseDraining
		m.cause, m.reason = cause, reason
		m.emit(AbortEpochs{After: m.inflight[0].epoch.Curr})
		return
	}
	m.becomeRecovering(reason, cause)
}

// becomeRecovering forgets everything after the last committed checkpoint
// and asks the performer to rebuild from it.
func (m *Machine) becomeRecovering(reason RecoveryReason, cause error) {
	m.phase = phaseRecovering
	m.cause, m.reason = nil, ""
	m.inflight = nil
	m.committing = false
	m.pending = nil
	// The rebuilt topology replaces the stopping jobs' actors too: a
	// graceful drop in progress is finished by the rebuild.
	clear(m.stopping)
	if m.droppedInRecovery == nil {
		m.droppedInRecovery = newActorSet()
	}
	// The first barrier after recovery follows the committed epoch: the
	// rebuilt actors restart from its state.
	m.prevInjected = m.committed
	// Abort first: the performer discards staged writes, then rebuilds;
	// the other order would discard what the rebuilt actors write.
	m.emit(AbortEpochs{After: m.committed})
	m.emit(StartRecovery{FromEpoch: m.committed, Cause: cause, Reason: reason})
}

// RecoveryDone reports that the graph was rebuilt from the last committed
// checkpoint with the given jobs. Actors dropped during the recovery are
// left out even if listed, since the topology may have been read before the
// drop. A checkpoint barrier with a fresh epoch is injected at once, so the
// rebuilt actors get their first barrier; periodic injection resumes.
func (m *Machine) RecoveryDone(now time.Time, jobs []JobSpec) error {
	defer m.maybeCheckInvariants()
	if m.phase != phaseRecovering {
		return fmt.Errorf("recovery done: %w", ErrNotRecovering)
	}
	if err := validateTopology(jobs); err != nil {
		return err
	}
	m.jobs = make(map[JobID]JobSpec, len(jobs))
	m.actorJob = make(map[ActorID]JobID)
	m.sources = newActorSet()
	for _, j := range jobs {
		if j = m.withoutDropped(j); len(j.Actors) > 0 {
			m.addToTopology(j)
		}
	}
	m.droppedInRecovery = nil
	m.phase = phaseRunning
	m.sinceCheckpoint = 0
	m.inject(now, m.allocEpoch(), true, nil, ReasonRecovery)
	return nil
}

// validateTopology checks every spec and that no id appears twice.
func validateTopology(jobs []JobSpec) error {
	seenJob := make(map[JobID]bool, len(jobs))
	seenActor := make(map[ActorID]JobID)
	for _, j := range jobs {
		if err := j.validate(); err != nil {
			return fmt.Errorf("recovery done: %w", err)
		}
		if seenJob[j.ID] {
			return fmt.Errorf("recovery done: job %d listed twice: %w", j.ID, ErrInvalidJob)
		}
		seenJob[j.ID] = true
		for _, a := range j.Actors {
			if other, ok := seenActor[a]; ok {
				return fmt.Errorf("recovery done: actor %d in jobs %d and %d: %w", a, other, j.ID, ErrInvalidJob)
			}
			seenActor[a] = j.ID
		}
	}
	return nil
}

// withoutDropped returns a copy of j without the actors dropped during the
// recovery.
func (m *Machine) withoutDropped(j JobSpec) JobSpec {
	return without(j.clone(), m.droppedInRecovery)
}

// ForceRecovery starts a recovery on request (the RECOVER statement): the
// same path as an actor failure, without one. It is a no-op while a
// recovery is already under way.
func (m *Machine) ForceRecovery(cause error) {
	defer m.maybeCheckInvariants()
	if m.phase != phaseRunning {
		return
	}
	m.beginRecovery(ReasonRequested, cause)
}
