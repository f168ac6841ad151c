package barrier

import (
	"fmt"
	"strings"
	"time"
)

// Action is one thing the performer must do. The coordinator only describes
// actions; the single goroutine that owns it performs them, in the order
// Ready returns them, and feeds results back as events.
type Action interface {
	// String is the one-line form the datadriven tests print.
	String() string
	action()
}

// Mutation changes the graph together with a barrier: every actor sees it at
// the same point of the data stream.
type Mutation interface {
	String() string
	mutation()
}

// Add starts a new job. Upstream dispatchers add outputs to its actors when
// they see this barrier, the job's own source actors (if any) receive it as
// their first barrier, and from this epoch on the job's actors are expected
// to collect every barrier.
type Add struct {
	Job JobSpec
}

func (a Add) String() string { return "add(" + a.Job.String() + ")" }
func (Add) mutation()        {}

// Inject sends a barrier into the Sources. Every actor in Expected must
// collect it (call Collected) before the epoch can commit.
type Inject struct {
	Epoch Epoch
	// Time is when the machine injected it (its injected clock): the
	// barrier's now(), for temporal filters.
	Time       time.Time
	Checkpoint bool
	Mutation   Mutation // nil for a plain barrier
	Reason     string   // why it was injected: tick, recovery, add-job, or a requester's reasons
	Sources    []ActorID
	Expected   []ActorID
}

func (Inject) action() {}
func (a Inject) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "inject %s", a.Epoch)
	if a.Checkpoint {
		b.WriteString(" checkpoint")
	}
	if a.Mutation != nil {
		fmt.Fprintf(&b, " mutation=%s", a.Mutation)
	}
	fmt.Fprintf(&b, " reason=%s sources=%s expected=%s", a.Reason, formatActors(a.Sources), formatActors(a.Expected))
	return b.String()
}

// Commit asks the performer to commit an epoch that every expected actor
// collected. For a checkpoint it writes the epoch's staged writes, the
// source offsets and the committed-epoch marker in one synced batch; for a
// non-checkpoint epoch it only seals the staged writes so that the next
// checkpoint includes them. Either way it answers with CommitDone or
// CommitFailed. At most one Commit is outstanding at a time.
type Commit struct {
	Epoch      Epoch
	Checkpoint bool
	InjectedAt time.Time // when the epoch's barrier was injected (metrics)
}

func (Commit) action() {}
func (a Commit) String() string {
	if a.Checkpoint {
		return fmt.Sprintf("commit e=%d checkpoint", a.Epoch.Curr)
	}
	return fmt.Sprintf("commit e=%d", a.Epoch.Curr)
}

// StartRecovery asks the performer to stop every actor and rebuild the graph
// from FromEpoch, the last committed checkpoint, then call RecoveryDone.
type StartRecovery struct {
	FromEpoch uint64
	Cause     error
	Reason    RecoveryReason
}

// RecoveryReason is the kind of event that started a recovery (a metric's
// label: sluice_recoveries_total{reason}).
type RecoveryReason string

// The reasons a recovery starts.
const (
	ReasonStartup       RecoveryReason = "startup"        // every process start
	ReasonActorFailure  RecoveryReason = "actor_failure"  // an actor stopped with an error
	ReasonCommitFailure RecoveryReason = "commit_failure" // the store refused an epoch
	ReasonRequested     RecoveryReason = "requested"      // RECOVER, or a failure outside the graph
)

func (StartRecovery) action() {}
func (a StartRecovery) String() string {
	return fmt.Sprintf("start-recovery from=%d reason=%s cause=%q", a.FromEpoch, a.Reason, a.Cause)
}

// AbortEpochs discards every staged write of epochs after After: they will
// never commit. Anyone waiting for such an epoch (a FLUSH, an Add) learns
// here that it failed.
type AbortEpochs struct {
	After uint64
}

func (AbortEpochs) action()          {}
func (a AbortEpochs) String() string { return fmt.Sprintf("abort-epochs after=%d", a.After) }

// DiscardActorWrites drops every uncommitted write staged by these actors,
// in every epoch, so that no later Commit includes them. A Commit emitted
// before this action is allowed to include them (its epoch was complete).
type DiscardActorWrites struct {
	Job    JobID
	Actors []ActorID
}

func (DiscardActorWrites) action() {}
func (a DiscardActorWrites) String() string {
	return fmt.Sprintf("discard-writes job=%d actors=%s", a.Job, formatActors(a.Actors))
}

// DeleteState deletes the job's committed state. It is idempotent and may be
// done in the background, but after any Commit emitted before it.
type DeleteState struct {
	Job JobID
}

func (DeleteState) action()          {}
func (a DeleteState) String() string { return fmt.Sprintf("delete-state job=%d", a.Job) }

// Stop is the graceful, barrier-carried stop of whole jobs: their actors
// finish the epoch of this barrier (their writes for it are staged and
// commit with it), pass the barrier on and exit. From the next epoch on
// they are no longer expected. Immediate drop (DropActors) does not use
// it; sinks that must flush a final epoch do.
type Stop struct {
	Jobs []JobSpec
}

func (s Stop) String() string {
	parts := make([]string, len(s.Jobs))
	for i, j := range s.Jobs {
		parts[i] = j.String()
	}
	return "stop(" + strings.Join(parts, "; ") + ")"
}
func (Stop) mutation() {}

// StopActors lists every actor a Stop stops.
func (s Stop) StopActors() []ActorID {
	var out []ActorID
	for _, j := range s.Jobs {
		out = append(out, j.Actors...)
	}
	return sortedCopy(out)
}
