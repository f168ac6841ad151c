// Package meta is the control plane: the coordinator goroutine that owns
// the barrier state machine (package barrier) and performs its actions
// against the compute node and the store, and the job lifecycle on top of
// it (create, drop, recover).
//
// One goroutine (Coordinator.Run) owns the barrier machine. Everything
// else — actors collecting barriers, sessions creating or dropping jobs,
// FLUSH — sends it events over a channel; it applies them to the machine
// and performs the resulting actions in order: inject a barrier into the
// source actors, commit an epoch in the store, discard a dropped actor's
// writes, delete a dropped job's state (in the background), or recover.
//
// Control never waits for data: a drop tears the job's actors down
// directly on the compute node (detach, cancel, wait) and only then tells
// the coordinator, which removes the actors from every in-flight epoch; no
// step waits for a barrier to pass through the job.
//
// The graceful variant (StopJobs) is the exception on purpose: its Stop
// rides a barrier, for jobs that must flush a final epoch, and the caller
// may give up on it at any time and drop the jobs at once. ResetJobs is a
// drop that keeps the jobs' state, for RECOVER MATERIALIZED VIEW.
package meta
