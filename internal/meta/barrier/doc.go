// Package barrier is the global barrier manager of Sluice as a pure state
// machine, in the style of etcd-io/raft: Machine does no I/O, starts no
// goroutines and reads no clock. Events go in as method calls (with the
// current time where time matters); actions come out of Ready. One goroutine
// elsewhere owns the Machine, performs its actions and feeds the results
// back as events.
//
// # The API: events in, Ready out
//
// Every event method (Tick, RequestBarrier, AddJob, StopJobs, Collected,
// CommitDone, CommitFailed, ActorFailed, DropActors, ResetActors,
// RecoveryDone) only appends actions
// to an outbox; Ready drains it. We chose a Ready drain over returning
// actions from each event because events chain (a drop completes an epoch,
// which commits it; a commit frees room, which injects a waiting barrier)
// and one outbox keeps that chain in a single ordered list. An event that
// returns an error has changed nothing and appended nothing, so the caller
// may log it and carry on; errors are kinds (ErrUnknownEpoch, ...) matched
// with errors.Is.
//
// The performer loop is:
//
//	for {
//		select {
//		case now := <-ticker:       m.Tick(now)
//		case c := <-collections:    m.Collected(c.Actor, c.Epoch)
//		case r := <-commitResults:  m.CommitDone(now, r.Epoch) / m.CommitFailed(...)
//		case req := <-requests:     epoch, err := m.RequestBarrier(now, "flush") ...
//		...
//		}
//		for _, a := range m.Ready() { perform(a) }
//	}
//
// Actions are performed in the order given. A Commit may be handed to a
// background committer, but the store must apply DiscardActorWrites and
// DeleteState after any Commit emitted before them (a single writer queue
// gives this for free).
//
// # An epoch's life
//
//  1. Injection. Tick injects a periodic barrier once Interval has passed
//     since the last injection; RequestBarrier (FLUSH) and AddJob inject one
//     on demand. Nothing is injected while MaxInFlight epochs are in flight:
//     requested barriers then wait with their epoch already reserved (and
//     handed to the requester), later requests share the waiting barrier,
//     and periodic barriers do not overtake it, so epochs only ever increase.
//     The Inject action names the source actors to inject into and the
//     expected set: every actor in the topology at that moment.
//  2. Collection. Each expected actor reports Collected(actor, epoch) when
//     the barrier passes it (its writes for the epoch are staged). Reports
//     arrive in any order across actors; one actor passes epochs in order,
//     and a report that skips an older epoch is refused (ErrOutOfOrder).
//     Because every younger epoch expects a superset of the older one's
//     actors (minus drops, which apply to all), the oldest epoch always
//     completes first, but it may still be committing when younger epochs
//     complete.
//  3. Commit. When the oldest in-flight epoch is complete, Commit is
//     emitted. Only one Commit is outstanding at a time: younger complete
//     epochs wait for CommitDone of the older one, so commits are strictly
//     in epoch order, and a failed commit never has younger ones racing it.
//     A checkpoint Commit writes the epoch durably and becomes the recovery
//     point (Status.Committed); a non-checkpoint one (CheckpointEvery > 1)
//     only seals the epoch's writes into the next checkpoint.
//  4. CommitDone(now, epoch) retires the epoch, records its latency
//     (inject time to now; the Machine only knows times passed in events),
//     then lets the next complete epoch commit and waiting barriers inject.
//
// A FLUSH caller waits for CommitDone of the epoch RequestBarrier returned;
// an AbortEpochs{After} below that epoch tells it the flush failed.
//
// # Adding a job
//
// AddJob(now, spec) schedules a checkpoint barrier carrying Add{spec}. When
// that barrier is injected the job joins the topology: it goes into the
// job's own sources too (their first barrier) and the job's actors are in
// its expected set, and in every later one, but never in an earlier one
// (ErrNotExpected). The job has started when that epoch commits.
//
// # Dropping actors: Sluice's immediate drop
//
// DESIGN.md promises that control never waits for data. The job lifecycle
// detaches a job from its upstream dispatchers and stops its actors over
// the control channel, then calls DropActors(job, actors). No barrier is
// involved:
//
//   - the actors leave the expected set of every in-flight epoch and of all
//     later ones; an epoch that waited only for them is now complete and
//     commits (in order, like any other);
//   - actors that already collected an in-flight epoch are forgotten there
//     too, since their writes are discarded: DiscardActorWrites is emitted
//     before any Commit that follows, so no later commit includes them;
//   - once the job has no actors left, DeleteState{job} is emitted;
//   - a job whose Add barrier has not been injected yet is simply not added
//     (cancel before the first barrier); if it was injected but has not
//     committed, the epoch commits without it. Either way the job
//     disappears;
//   - late collections and failures of dropped actors are refused with
//     ErrUnknownActor and, crucially, never start a recovery;
//   - dropping unknown actors changes nothing, so drops can be repeated;
//     several jobs (a CASCADE) are dropped with one call per job.
//
// # The graceful stop, and resetting a job
//
// StopJobs(now, jobs) is the barrier-carried variant of a drop (DROP …
// GRACEFUL), for jobs that must flush a final epoch. It schedules a
// checkpoint barrier carrying Stop{jobs}; that epoch still expects the
// jobs' actors, which pass it, collect it and exit, so their writes for it
// commit with it. Later epochs neither expect them nor feed their sources.
// The jobs stay in the topology until the caller, having seen the epoch
// commit, tears them down and calls DropActors, which deletes their state
// as for any drop. A caller that gives up waiting (the barrier is stuck
// behind data) calls DropActors at once: the job leaves a Stop that is
// still waiting for room, and the expected set of one in flight. A
// recovery forgets every stop; the rebuilt topology decides.
//
// ResetActors(job, actors) is DropActors without DeleteState: RECOVER
// MATERIALIZED VIEW tears a job's actors down, rebuilds its state and adds
// it again (AddJob, same job id, new actors).
//
// # Recovery
//
// ActorFailed (of a known actor) or CommitFailed starts a recovery: every
// in-flight and waiting epoch is dropped, StartRecovery{FromEpoch: last
// committed checkpoint} and AbortEpochs{After: it} are emitted, and nothing
// is injected and no barrier can be requested (ErrRecovering) until the
// performer has rebuilt the actors and calls RecoveryDone(now, jobs).
// If a Commit is outstanding when the failure arrives, its epoch was
// complete and may be being written right now, so the Machine first emits
// AbortEpochs{After: that epoch} for the younger ones and waits (draining)
// for the commit's answer; the recovery point is then known for sure.
//
// Drops during recovery are remembered and the topology passed to
// RecoveryDone is filtered through them, since it may have been read before
// the drop. RecoveryDone injects a checkpoint barrier at once with a fresh
// epoch above every epoch ever used (aborted ones included), whose Prev is
// the committed epoch the actors restarted from; periodic injection resumes.
//
// A new Machine starts in recovery, with cause "startup": building the
// graph at boot is the same work as rebuilding it after a failure.
//
// # Checking
//
// Tests are datadriven scripts in testdata (regenerate expected output with
// go test ./internal/meta/barrier -rewrite) and a rapid property test that
// drives random event sequences through a simulated performer. Building
// with -tags invariants makes every event check the Machine's internal
// invariants and panic on a violation.
package barrier
