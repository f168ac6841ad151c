package meta

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/sluice-db/sluice/internal/meta/barrier"
	"github.com/sluice-db/sluice/internal/stream"
)

// event is something the coordinator goroutine applies to its machine.
type event interface{ apply(c *Coordinator) }

type evCollected struct {
	actor stream.ActorID
	epoch uint64
}

func (e evCollected) apply(c *Coordinator) {
	// An unknown actor is one that was dropped a moment ago: harmless.
	_ = c.m.Collected(barrier.ActorID(e.actor), e.epoch)
}

type evFailed struct {
	actor stream.ActorID
	gen   uint64
	err   error
}

func (e evFailed) apply(c *Coordinator) {
	if e.gen != c.compute.Generation() {
		// An actor torn down by a recovery since: its failure (often a
		// stale state table after the abort) is no news.
		c.cfg.Logger.Debug("stale actor failure", "actor", e.actor, "err", e.err)
		return
	}
	c.cfg.Logger.Warn("actor failed", "actor", e.actor, "err", e.err)
	_ = c.m.ActorFailed(barrier.ActorID(e.actor), e.err)
}

type epochReply struct {
	epoch uint64
	err   error
}

type evAddJob struct {
	spec  barrier.JobSpec
	adds  map[stream.ActorID][]stream.Dispatcher
	reply chan epochReply
}

func (e evAddJob) apply(c *Coordinator) {
	c.adds[uint32(e.spec.ID)] = e.adds
	ep, err := c.m.AddJob(time.Now(), e.spec)
	if err != nil {
		delete(c.adds, uint32(e.spec.ID))
	}
	e.reply <- epochReply{ep, err}
}

type evDrop struct {
	jobs  map[uint32][]stream.ActorID
	reply chan error
}

func (e evDrop) apply(c *Coordinator) {
	drops := make([]barrier.JobDrop, 0, len(e.jobs))
	for job, actors := range e.jobs {
		delete(c.adds, job)
		ids := make([]barrier.ActorID, len(actors))
		for i, a := range actors {
			ids[i] = barrier.ActorID(a)
		}
		drops = append(drops, barrier.JobDrop{Job: barrier.JobID(job), Actors: ids})
	}
	slices.SortFunc(drops, func(a, b barrier.JobDrop) int { return cmp.Compare(a.Job, b.Job) })
	e.reply <- c.m.DropJobs(drops)
}

type evRequest struct {
	reason string
	reply  chan epochReply
}

func (e evRequest) apply(c *Coordinator) {
	ep, err := c.m.RequestBarrier(time.Now(), e.reason)
	e.reply <- epochReply{ep, err}
}

type evFailAll struct{ cause error }

func (e evFailAll) apply(c *Coordinator) { c.m.ForceRecovery(e.cause) }

// send delivers an event to the coordinator goroutine.
func (c *Coordinator) send(ctx context.Context, ev event) error {
	select {
	case c.events <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Collect implements stream.BarrierSink for the compute node.
func (c *Coordinator) Collect(ctx context.Context, actor stream.ActorID, epoch uint64) error {
	return c.send(ctx, evCollected{actor, epoch})
}

// ActorFailed reports an actor's own failure; the coordinator recovers.
func (c *Coordinator) ActorFailed(actor stream.ActorID, gen uint64, err error) {
	// Never block an exiting actor for long: a full event queue means the
	// coordinator is already busy recovering.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.send(ctx, evFailed{actor, gen, err})
}

// AddJob registers a prepared, started job; its actors are expected from
// the returned epoch on, whose barrier carries adds to upstream actors.
func (c *Coordinator) AddJob(ctx context.Context, spec barrier.JobSpec, adds map[stream.ActorID][]stream.Dispatcher) (uint64, error) {
	reply := make(chan epochReply, 1)
	if err := c.send(ctx, evAddJob{spec, adds, reply}); err != nil {
		return 0, err
	}
	return wait(ctx, reply)
}

// DropJobs removes torn-down jobs' actors from every in-flight epoch.
func (c *Coordinator) DropJobs(ctx context.Context, jobs map[uint32][]stream.ActorID) error {
	reply := make(chan error, 1)
	if err := c.send(ctx, evDrop{jobs, reply}); err != nil {
		return err
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RequestBarrier asks for a barrier now and returns its epoch (FLUSH).
func (c *Coordinator) RequestBarrier(ctx context.Context, reason string) (uint64, error) {
	reply := make(chan epochReply, 1)
	if err := c.send(ctx, evRequest{reason, reply}); err != nil {
		return 0, err
	}
	return wait(ctx, reply)
}

// Recover forces a full recovery (the RECOVER statement).
func (c *Coordinator) Recover(ctx context.Context, cause error) error {
	return c.send(ctx, evFailAll{cause})
}

// Status returns a snapshot of the coordinator's state.
func (c *Coordinator) Status(ctx context.Context) (Status, error) {
	reply := make(chan Status, 1)
	select {
	case c.status <- reply:
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
	select {
	case s := <-reply:
		return s, nil
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
}

func wait(ctx context.Context, reply chan epochReply) (uint64, error) {
	select {
	case r := <-reply:
		return r.epoch, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
