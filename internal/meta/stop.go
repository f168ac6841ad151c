package meta

import (
	"context"
	"errors"
	"time"

	"github.com/sluice-db/sluice/internal/meta/barrier"
	"github.com/sluice-db/sluice/internal/stream"
)

// evStop schedules the graceful stop of running jobs.
type evStop struct {
	jobs  []uint32
	reply chan epochReply
}

func (e evStop) apply(c *Coordinator) {
	ids := make([]barrier.JobID, len(e.jobs))
	for i, j := range e.jobs {
		ids[i] = barrier.JobID(j)
	}
	ep, err := c.m.StopJobs(time.Now(), ids)
	e.reply <- epochReply{ep, err}
}

// evReset takes jobs' actors out of the barrier bookkeeping, keeping
// their state (RECOVER MATERIALIZED VIEW).
type evReset struct {
	jobs  map[uint32][]stream.ActorID
	reply chan error
}

func (e evReset) apply(c *Coordinator) {
	var errs []error
	for job, actors := range e.jobs {
		delete(c.adds, job)
		ids := make([]barrier.ActorID, len(actors))
		for i, a := range actors {
			ids[i] = barrier.ActorID(a)
		}
		if err := c.m.ResetActors(barrier.JobID(job), ids); err != nil {
			errs = append(errs, err)
		}
	}
	e.reply <- errors.Join(errs...)
}

// StopJobs schedules the barrier-carried graceful stop of running jobs
// (DROP … GRACEFUL) and returns its epoch: once that epoch has committed,
// the jobs' actors have flushed their final epoch and exited, and the
// caller tears them down and calls DropJobs. A job that is not running is
// refused with barrier.ErrUnknownJob.
func (c *Coordinator) StopJobs(ctx context.Context, jobs []uint32) (uint64, error) {
	reply := make(chan epochReply, 1)
	if err := c.send(ctx, evStop{jobs, reply}); err != nil {
		return 0, err
	}
	return wait(ctx, reply)
}

// ResetJobs takes torn-down jobs' actors out of every in-flight epoch and
// discards their uncommitted writes, like DropJobs, but leaves their
// state alone: they are about to be rebuilt and added again. When it
// returns, the discards and any commit before them have been performed.
func (c *Coordinator) ResetJobs(ctx context.Context, jobs map[uint32][]stream.ActorID) error {
	reply := make(chan error, 1)
	if err := c.send(ctx, evReset{jobs, reply}); err != nil {
		return err
	}
	var err error
	select {
	case err = <-reply:
	case <-ctx.Done():
		return ctx.Err()
	}
	// The reply is sent while the event is applied; its actions are
	// performed right after, before the coordinator answers anything
	// else. A status round trip therefore waits for them.
	if _, serr := c.Status(ctx); serr != nil {
		return serr
	}
	return err
}

// stopMutation turns the machine's Stop into the barrier's mutation: the
// set of actors that exit after this barrier.
func stopMutation(s barrier.Stop) *stream.StopMutation {
	m := &stream.StopMutation{Actors: map[stream.ActorID]bool{}}
	for _, a := range s.StopActors() {
		m.Actors[stream.ActorID(a)] = true
	}
	return m
}
