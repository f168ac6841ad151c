package barrier

import "errors"

// Error kinds returned by the event methods. Every event that returns an
// error has changed nothing, so the caller may log it and carry on. Match
// them with errors.Is; the wrapped message says which actor or epoch.
var (
	// ErrUnknownEpoch: the epoch is not in flight (never injected, already
	// committed, or aborted by a recovery). Late collections from before a
	// recovery land here.
	ErrUnknownEpoch = errors.New("barrier: epoch not in flight")
	// ErrUnknownActor: the actor is not in the topology. A dropped actor
	// that reports a failure while it shuts down lands here, and must not
	// cause a recovery.
	ErrUnknownActor = errors.New("barrier: unknown actor")
	// ErrNotExpected: the epoch does not expect this actor, e.g. a new job's
	// actor collecting an epoch injected before its Add barrier, or an actor
	// dropped after the epoch was injected.
	ErrNotExpected = errors.New("barrier: actor not expected in epoch")
	// ErrDuplicateCollect: the actor already collected this epoch.
	ErrDuplicateCollect = errors.New("barrier: duplicate collection")
	// ErrOutOfOrder: the actor skipped an older in-flight epoch; an actor
	// passes barriers in epoch order, so this is a bug upstream.
	ErrOutOfOrder = errors.New("barrier: actor collected epochs out of order")
	// ErrNotCommitting: CommitDone/CommitFailed for an epoch whose commit
	// was not requested (or was already answered).
	ErrNotCommitting = errors.New("barrier: epoch is not being committed")
	// ErrRecovering: barriers cannot be requested and jobs cannot be added
	// while the graph is being rebuilt; retry after recovery.
	ErrRecovering = errors.New("barrier: recovering")
	// ErrNotRecovering: RecoveryDone without a recovery in progress.
	ErrNotRecovering = errors.New("barrier: not recovering")
	// ErrJobExists: AddJob for a job id or actor id already known.
	ErrJobExists = errors.New("barrier: job or actor already exists")
	// ErrInvalidJob: a JobSpec that cannot describe a job.
	ErrInvalidJob = errors.New("barrier: invalid job spec")
	// ErrWrongJob: DropActors named an actor that belongs to another job.
	ErrWrongJob = errors.New("barrier: actor belongs to another job")
)

// Errors of the graceful stop.
var (
	// ErrUnknownJob: StopJobs named a job that is not running (never
	// added, still waiting for its Add barrier, or dropped).
	ErrUnknownJob = errors.New("barrier: job not running")
	// ErrJobStopping: StopJobs named a job whose Stop barrier was already
	// scheduled.
	ErrJobStopping = errors.New("barrier: job is already stopping")
)
