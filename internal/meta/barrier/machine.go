package barrier

import (
	"errors"
	"fmt"
	"time"
)

// phase is where the coordinator is in its running/recovery cycle.
type phase uint8

const (
	// phaseRunning: barriers are injected, collected and committed.
	phaseRunning phase = iota
	// phaseDraining: a failure arrived while a Commit was outstanding. That
	// epoch was complete, so its commit may well succeed; recovery starts
	// from whatever CommitDone/CommitFailed says, never from a guess.
	phaseDraining
	// phaseRecovering: StartRecovery was emitted; waiting for RecoveryDone.
	phaseRecovering
)

func (p phase) String() string {
	switch p {
	case phaseRunning:
		return "running"
	case phaseDraining:
		return "draining"
	default:
		return "recovering"
	}
}

// errStartup is the cause of the recovery every Machine starts in.
var errStartup = errors.New("startup")

// inflightEpoch is an injected barrier that has not committed yet.
type inflightEpoch struct {
	epoch      Epoch
	checkpoint bool
	mutation   Mutation
	injectedAt time.Time
	// remaining are the expected actors that have not collected yet;
	// collected are those that have. Dropping an actor removes it from
	// both: its writes are discarded, so it no longer counts either way.
	remaining actorSet
	collected actorSet
}

// pendingBarrier is a requested barrier waiting for room in flight. Its
// epoch is reserved when it is requested, so the requester learns at once
// which epoch to wait for; pending barriers are injected in order and every
// periodic barrier waits behind them, so epochs still only increase.
type pendingBarrier struct {
	epoch  uint64
	add    *JobSpec // the job this barrier starts, if any
	stop   []JobID  // the jobs this barrier stops gracefully, if any
	reason string
}

func (p *pendingBarrier) hasMutation() bool { return p.add != nil || len(p.stop) > 0 }

// Machine is the global barrier coordinator. It is not safe for concurrent
// use: one goroutine owns it, calls its event methods and performs the
// actions Ready returns. See doc.go for the flow.
type Machine struct {
	cfg   Config
	phase phase
	// cause is the failure that ends the draining phase in a recovery,
	// and reason its kind.
	cause  error
	reason RecoveryReason

	// lastEpoch is the highest epoch ever handed out (injected or reserved);
	// new epochs are always above it, so none is ever reused.
	lastEpoch uint64
	// prevInjected is the Curr of the last injected barrier, the Prev of the
	// next one. Recovery resets it to committed.
	prevInjected uint64
	lastInjectAt time.Time
	// sinceCheckpoint counts periodic barriers since the last checkpoint.
	sinceCheckpoint int
	// committed is the last checkpoint epoch durably committed: where a
	// recovery restarts from.
	committed uint64

	inflight   []*inflightEpoch // ascending epochs
	committing bool             // a Commit for inflight[0] is outstanding
	pending    []*pendingBarrier

	jobs     map[JobID]JobSpec
	actorJob map[ActorID]JobID
	sources  actorSet
	// stopping maps each job whose Stop barrier was injected to that
	// barrier's epoch. Its actors stay in the topology (until DropActors)
	// but are expected by no later epoch, and its sources left sources.
	stopping map[JobID]uint64
	// droppedInRecovery are actors dropped since the last failure. The
	// topology passed to RecoveryDone may have been read before the drop; it
	// is filtered through this set so a dropped job cannot come back.
	droppedInRecovery actorSet

	lastCommitLatency time.Duration
	out               []Action
}

// New returns a coordinator whose last committed checkpoint is committed
// (read from the store). Like after any failure, it starts in recovery: the
// first Ready holds StartRecovery, and nothing is injected until the
// performer builds the actors and calls RecoveryDone.
//
// Epochs restart above committed after a process restart. That is safe
// because uncommitted writes never survive a restart, so a reused number
// cannot meet stale data.
func New(cfg Config, committed uint64) *Machine {
	m := &Machine{
		cfg:          cfg.withDefaults(),
		lastEpoch:    committed,
		prevInjected: committed,
		committed:    committed,
		jobs:         make(map[JobID]JobSpec),
		actorJob:     make(map[ActorID]JobID),
		sources:      newActorSet(),
		stopping:     make(map[JobID]uint64),
	}
	m.becomeRecovering(ReasonStartup, errStartup)
	return m
}

// Ready returns the actions produced since the last call and forgets them.
// The caller performs them in order; results come back as events.
func (m *Machine) Ready() []Action {
	out := m.out
	m.out = nil
	return out
}

// HasReady reports whether Ready would return anything.
func (m *Machine) HasReady() bool { return len(m.out) > 0 }

func (m *Machine) emit(a Action) { m.out = append(m.out, a) }

// Status is a snapshot for metrics and SHOW commands.
type Status struct {
	Recovering        bool
	Committed         uint64 // last committed checkpoint
	LastEpoch         uint64 // highest epoch handed out
	InFlight          int
	Pending           int           // requested barriers waiting for room
	OldestInFlightAge time.Duration // zero when nothing is in flight
	LastCommitLatency time.Duration // inject → CommitDone of the last commit
	Jobs              int
	Actors            int
}

func (s Status) String() string {
	return fmt.Sprintf("recovering=%t committed=%d last-epoch=%d in-flight=%d pending=%d oldest-age=%s last-commit-latency=%s jobs=%d actors=%d",
		s.Recovering, s.Committed, s.LastEpoch, s.InFlight, s.Pending, s.OldestInFlightAge, s.LastCommitLatency, s.Jobs, s.Actors)
}

// Status reports the coordinator's state; now only serves to compute ages.
func (m *Machine) Status(now time.Time) Status {
	s := Status{
		Recovering:        m.phase != phaseRunning,
		Committed:         m.committed,
		LastEpoch:         m.lastEpoch,
		InFlight:          len(m.inflight),
		Pending:           len(m.pending),
		LastCommitLatency: m.lastCommitLatency,
		Jobs:              len(m.jobs),
		Actors:            len(m.actorJob),
	}
	if len(m.inflight) > 0 {
		s.OldestInFlightAge = now.Sub(m.inflight[0].injectedAt)
	}
	return s
}

// Committed is the last committed checkpoint epoch.
func (m *Machine) Committed() uint64 { return m.committed }
