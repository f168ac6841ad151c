package barrier

import (
	"fmt"
	"time"
)

// Collected reports that actor passed the barrier of epoch (and staged its
// writes for it). When the oldest in-flight epoch has been collected by
// every expected actor, its Commit is emitted; a younger epoch that
// completes first waits for it, because commits go strictly in epoch order.
//
// Errors (unknown epoch, unknown or unexpected actor, duplicate, out of
// order) change nothing: late collections from dropped actors and from
// before a recovery are expected and may be logged and ignored.
func (m *Machine) Collected(actor ActorID, epoch uint64) error {
	defer m.maybeCheckInvariants()
	i := m.findInflight(epoch)
	if i < 0 {
		return fmt.Errorf("actor %d collected epoch %d: %w", actor, epoch, ErrUnknownEpoch)
	}
	e := m.inflight[i]
	if e.collected.has(actor) {
		return fmt.Errorf("actor %d collected epoch %d: %w", actor, epoch, ErrDuplicateCollect)
	}
	if !e.remaining.has(actor) {
		if _, known := m.actorJob[actor]; !known {
			return fmt.Errorf("actor %d collected epoch %d: %w", actor, epoch, ErrUnknownActor)
		}
		return fmt.Errorf("actor %d collected epoch %d: %w", actor, epoch, ErrNotExpected)
	}
	for _, older := range m.inflight[:i] {
		if older.remaining.has(actor) {
			return fmt.Errorf("actor %d collected epoch %d before %d: %w", actor, epoch, older.epoch.Curr, ErrOutOfOrder)
		}
	}
	delete(e.remaining, actor)
	e.collected[actor] = struct{}{}
	m.maybeCommit()
	return nil
}

func (m *Machine) findInflight(epoch uint64) int {
	for i, e := range m.inflight {
		if e.epoch.Curr == epoch {
			return i
		}
	}
	return -1
}

// maybeCommit emits the Commit of the oldest in-flight epoch if it is
// complete and no other commit is outstanding. One commit at a time keeps
// the store's commits in epoch order without relying on the performer, and
// makes a failed commit easy: nothing younger was attempted.
func (m *Machine) maybeCommit() {
	if m.committing || len(m.inflight) == 0 || len(m.inflight[0].remaining) > 0 {
		return
	}
	e := m.inflight[0]
	m.committing = true
	m.emit(Commit{Epoch: e.epoch, Checkpoint: e.checkpoint, InjectedAt: e.injectedAt})
}

// CommitDone reports that the outstanding Commit of epoch succeeded. The
// epoch leaves flight, which may let the next complete epoch commit and
// waiting requested barriers be injected. now gives the commit latency.
func (m *Machine) CommitDone(now time.Time, epoch uint64) error {
	defer m.maybeCheckInvariants()
	if err := m.checkCommitting(epoch); err != nil {
		return err
	}
	e := m.popCommitting()
	if e.checkpoint {
		m.committed = e.epoch.Curr
	}
	m.lastCommitLatency = now.Sub(e.injectedAt)
	if m.phase == phaseDraining {
		m.becomeRecovering(m.reason, m.cause)
		return nil
	}
	m.maybeCommit()
	m.injectPending(now)
	return nil
}

// CommitFailed reports that the outstanding Commit of epoch failed. The
// store may now be behind the actors' view, so the whole graph recovers
// from the last committed checkpoint.
func (m *Machine) CommitFailed(epoch uint64, cause error) error {
	defer m.maybeCheckInvariants()
	if err := m.checkCommitting(epoch); err != nil {
		return err
	}
	m.popCommitting()
	if m.phase == phaseDraining {
		// The earlier failure is the root cause; keep reporting it.
		m.becomeRecovering(m.reason, m.cause)
		return nil
	}
	m.becomeRecovering(ReasonCommitFailure, fmt.Errorf("commit epoch %d: %w", epoch, cause))
	return nil
}

func (m *Machine) checkCommitting(epoch uint64) error {
	if !m.committing || m.inflight[0].epoch.Curr != epoch {
		return fmt.Errorf("commit result for epoch %d: %w", epoch, ErrNotCommitting)
	}
	return nil
}

func (m *Machine) popCommitting() *inflightEpoch {
	e := m.inflight[0]
	m.inflight[0] = nil // let the epoch's sets be collected
	m.inflight = m.inflight[1:]
	m.committing = false
	return e
}
