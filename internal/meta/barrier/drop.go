package barrier

import (
	"errors"
	"fmt"
	"slices"
)

// DropActors removes actors of job at once, without waiting for any barrier.
// This is Sluice's immediate drop: the caller has detached the actors from
// their upstream dispatchers and stopped them over the control channel, and
// now the barrier bookkeeping forgets them:
//
//   - they leave the expected set of every in-flight epoch and of every
//     future one, so a pending epoch that only waited for them completes and
//     commits (in order, like any other);
//   - if the job's Add barrier is still waiting for room, the job simply
//     never starts;
//   - DiscardActorWrites is emitted, so their uncommitted writes (including
//     those of epochs they already collected) never reach a commit;
//   - once the job has no actors left, DeleteState is emitted.
//
// During recovery the actors are also remembered, and left out of the
// topology given to RecoveryDone. Actors that are not known are ignored; a
// drop of a job the running machine does not know at all (never
// registered, or dropped before) changes nothing but emits DeleteState, so
// that a CREATE that lost a race with the drop leaves no state behind;
// deleting state is idempotent, so repeating a drop is harmless. Naming an
// actor of another job is an error (and changes nothing).
func (m *Machine) DropActors(job JobID, actors []ActorID) error {
	defer m.maybeCheckInvariants()
	return m.forgetActors(job, actors, true)
}

// JobDrop names the actors of one job to drop.
type JobDrop struct {
	Job    JobID
	Actors []ActorID
}

// DropJobs drops several jobs as one step (a DROP … CASCADE, a CANCEL
// JOBS of several ids): every job leaves the in-flight epochs before any
// of them may commit, so no epoch commits a dropped job's writes just
// because another job of the same drop was forgotten first. A job whose
// drop is refused (see DropActors) changes nothing; the others still drop,
// and the errors are returned joined.
func (m *Machine) DropJobs(drops []JobDrop) error {
	defer m.maybeCheckInvariants()
	var errs []error
	for _, d := range drops {
		if err := m.forgetActorsDeferCommit(d.Job, d.Actors, true); err != nil {
			errs = append(errs, err)
		}
	}
	m.maybeCommit()
	return errors.Join(errs...)
}

// forgetActors is DropActors; deleteState is false for ResetActors.
func (m *Machine) forgetActors(job JobID, actors []ActorID, deleteState bool) error {
	if err := m.forgetActorsDeferCommit(job, actors, deleteState); err != nil {
		return err
	}
	// After the discard: the commit must not include the dropped writes.
	m.maybeCommit()
	return nil
}

// forgetActorsDeferCommit is forgetActors without the commit check, which
// the caller makes once it has forgotten everything it means to.
func (m *Machine) forgetActorsDeferCommit(job JobID, actors []ActorID, deleteState bool) error {
	if err := m.checkDropOwner(job, actors); err != nil {
		return err
	}
	drop := newActorSet(actors...)
	removed := m.removeFromTopology(job, drop)
	for a := range m.removeFromPending(job, drop) {
		removed[a] = struct{}{}
	}
	if _, running := m.jobs[job]; !running {
		m.forgetStopping(job)
	}
	if m.phase != phaseRunning {
		// Unknown ids count too: the rebuilt topology may list them.
		for a := range drop {
			m.droppedInRecovery[a] = struct{}{}
			removed[a] = struct{}{}
		}
	}
	if len(removed) == 0 {
		// A job the machine does not know (its CREATE lost a race with
		// this drop, or an earlier drop already forgot it): nothing to
		// discard, but its state and catalog entry must still go, or the
		// relation stays "dropping" until the next recovery. Deleting
		// state is idempotent, so repeating a drop stays harmless.
		if deleteState && m.phase == phaseRunning && !m.jobKnown(job) {
			m.emit(DeleteState{Job: job})
		}
		return nil
	}
	for _, e := range m.inflight {
		for a := range removed {
			delete(e.remaining, a)
			delete(e.collected, a)
		}
	}
	m.emit(DiscardActorWrites{Job: job, Actors: removed.sorted()})
	if deleteState && !m.jobKnown(job) {
		m.emit(DeleteState{Job: job})
	}
	return nil
}

// checkDropOwner refuses a drop that names another job's actor: that is a
// bug in the caller, and guessing would drop the wrong job.
func (m *Machine) checkDropOwner(job JobID, actors []ActorID) error {
	for _, a := range actors {
		if owner, ok := m.actorOwner(a); ok && owner != job {
			return fmt.Errorf("drop job %d: actor %d belongs to job %d: %w", job, a, owner, ErrWrongJob)
		}
	}
	return nil
}

// actorOwner finds the job of a running actor or of one waiting for its
// job's Add barrier.
func (m *Machine) actorOwner(a ActorID) (JobID, bool) {
	if j, ok := m.actorJob[a]; ok {
		return j, true
	}
	for _, p := range m.pending {
		if p.add != nil && slices.Contains(p.add.Actors, a) {
			return p.add.ID, true
		}
	}
	return 0, false
}

// removeFromTopology takes drop out of job's running actors and returns
// those it removed.
func (m *Machine) removeFromTopology(job JobID, drop actorSet) actorSet {
	removed := newActorSet()
	spec, ok := m.jobs[job]
	if !ok {
		return removed
	}
	for _, a := range spec.Actors {
		if drop.has(a) {
			removed[a] = struct{}{}
			delete(m.actorJob, a)
			delete(m.sources, a)
		}
	}
	spec = without(spec, drop)
	if len(spec.Actors) == 0 {
		delete(m.jobs, job)
	} else {
		m.jobs[job] = spec
	}
	return removed
}

// removeFromPending takes drop out of job's Add barrier if it is still
// waiting; a job left with no actors is not added at all. The barrier itself
// stays: its epoch was handed out and someone may wait for it.
func (m *Machine) removeFromPending(job JobID, drop actorSet) actorSet {
	removed := newActorSet()
	for _, p := range m.pending {
		if p.add == nil || p.add.ID != job {
			continue
		}
		for _, a := range p.add.Actors {
			if drop.has(a) {
				removed[a] = struct{}{}
			}
		}
		spec := without(*p.add, drop)
		p.add = &spec
		if len(spec.Actors) == 0 {
			p.add = nil
		}
	}
	return removed
}

func (m *Machine) jobKnown(job JobID) bool {
	if _, ok := m.jobs[job]; ok {
		return true
	}
	for _, p := range m.pending {
		if p.add != nil && p.add.ID == job {
			return true
		}
	}
	return false
}

// without returns a copy of j without the actors in drop.
func without(j JobSpec, drop actorSet) JobSpec {
	keep := func(ids []ActorID) []ActorID {
		out := make([]ActorID, 0, len(ids))
		for _, a := range ids {
			if !drop.has(a) {
				out = append(out, a)
			}
		}
		return out
	}
	return JobSpec{ID: j.ID, Actors: keep(j.Actors), Sources: keep(j.Sources)}
}
