// Package engine assembles one Sluice process: the store, the catalog, a
// compute node and the meta coordinator, wired in-process. It is what the
// SQL layer and the whole-system tests talk to: create a table or a
// materialized view from a plan, write DML, flush, read a consistent
// snapshot, drop, recover.
//
// Creating a job, step by step: allocate ids; cut the logical plan into
// fragments (plan.Fragmentize) and assign actors; write the catalog entry
// (state creating) durably; prepare the actors and channels on the compute
// node and start them; register the job with the coordinator, whose next
// barrier carries the Add mutation that connects upstream actors to the
// new job; wait until its backfill is done and an epoch after that has
// committed; mark it created.
//
// Dropping, step by step: mark every relation in the drop's closure
// dropping (durable: a crash from here on finishes the drop on recovery);
// tear the jobs down on the compute node (detach upstream outputs, cancel,
// wait for exit); tell the coordinator, which removes their actors from
// in-flight epochs and discards their uncommitted writes; delete their
// state in the background; delete the catalog entries.
//
// DROP … GRACEFUL (drop_graceful.go) marks the same way, then sends a
// barrier carrying Stop for the jobs and waits for its epoch to commit
// (the actors flushed their final epoch and exited) before the same
// teardown; cancelling the wait finishes the drop immediately. RECOVER
// MATERIALIZED VIEW (recover_job.go) tears one job and the jobs built on
// it down the same way but keeps their catalog entries, clears their state
// and deploys them again with new actors, backfilling from their inputs as
// CREATE does; no other job is touched.
//
// Control that changes how fast a job runs, never what it computes (ALTER
// … SET RATE_LIMIT, PAUSE, RESUME: control.go), goes straight to the
// job's actors through compute.Node.Control, without a barrier. The
// settings are recorded in the job's catalog record (durably, before the
// ALTER returns): Rebuild — after a RECOVER, a failure or a restart — and
// a new job's deploy apply them again before any barrier reaches the
// actors, so a paused job stays paused. A view created in the background (jobs.go)
// is finished by a goroutine of the engine's group, listed by Jobs while
// it is creating, and CancelJobs drops it like DROP does.
package engine
