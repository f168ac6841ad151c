package compute

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/stream"
)

// DropJobs tears down running jobs at once, whatever their barriers are
// doing: first every other actor detaches its outputs to them (a producer
// blocked sending to them is released), then their actors are cancelled,
// then the node waits for their goroutines to exit (they check
// cancellation at least once per output chunk, so this takes
// milliseconds). Unknown jobs are skipped: dropping is idempotent.
func (n *Node) DropJobs(ctx context.Context, ids []uint32) error {
	return n.StopJobs(ids)(ctx)
}

// StopJobs is DropJobs without the wait: the jobs are detached and their
// actors cancelled before it returns; the returned wait blocks until
// their goroutines have exited, releases what they held and forgets the
// jobs. An immediate DROP returns before waiting (the store fences the
// actors' writes off, see storage.DiscardActor) so that its latency does
// not include getting cancelled goroutines scheduled on busy cores.
func (n *Node) StopJobs(ids []uint32) (wait func(ctx context.Context) error) {
	n.mu.Lock()
	var jobs []*job
	var feeds []*stream.Output
	doomed := map[stream.ActorID]bool{}
	for _, id := range ids {
		if j, ok := n.mu.jobs[id]; ok {
			jobs = append(jobs, j)
			for _, a := range j.actors {
				doomed[a.id] = true
				feeds = append(feeds, a.feeds...)
			}
		}
	}
	var survivors []*stream.Actor
	for id, a := range n.mu.actors {
		if !doomed[id] && a.a != nil {
			survivors = append(survivors, a.a)
		}
	}
	n.mu.Unlock()
	// Detach every channel into the doomed actors first: this also covers
	// dispatchers an upstream actor has not installed yet (its Add barrier
	// is still queued behind data), which it would otherwise fill later.
	for _, o := range feeds {
		o.Detach()
	}
	detach := stream.ControlDetach{Downstream: doomed}
	for _, a := range survivors {
		a.HandleControl(detach)
	}
	for _, j := range jobs {
		n.stop(j)
	}
	return func(ctx context.Context) error { return n.wait(ctx, jobs) }
}

func (n *Node) stop(j *job) {
	for _, a := range j.actors {
		if a.a != nil {
			a.a.HandleControl(stream.ControlStop{})
		}
	}
	if j.group != nil {
		j.group.Cancel()
	}
}

// wait waits for the jobs' goroutines to exit, then forgets the jobs.
func (n *Node) wait(ctx context.Context, jobs []*job) error {
	for _, j := range jobs {
		if j.group != nil {
			select {
			case <-j.group.Idle():
				_ = j.group.Wait() // returns at once; releases the WaitGroup
				n.releaseJob(j)
			case <-ctx.Done():
				return fmt.Errorf("compute: job %d did not exit: %w", j.id, ctx.Err())
			}
		}
		n.forget(j)
	}
	return nil
}

func (n *Node) forget(j *job) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.mu.jobs, j.id)
	for _, a := range j.actors {
		delete(n.mu.actors, a.id)
	}
}

// StopAll cancels every job and waits for all actors to exit (recovery and
// shutdown).
func (n *Node) StopAll(ctx context.Context) error {
	// A new generation first: failures the old actors report from now on
	// are stale.
	n.gen.Add(1)
	n.mu.Lock()
	jobs := make([]*job, 0, len(n.mu.jobs))
	for _, j := range n.mu.jobs {
		jobs = append(jobs, j)
	}
	n.mu.Unlock()
	for _, j := range jobs {
		n.stop(j)
	}
	return n.wait(ctx, jobs)
}

// Progress is implemented by executors that report how far a job's
// initial work (backfill) has come.
type Progress interface {
	Progress() (scanned int64, done bool)
}

// JobProgress sums the progress of a job's backfill executors. running
// is false until the job's actors are built and started (also while a
// recovery rebuilds it), and for a job this node does not have; done is
// true when every backfill has finished, and for a running job with none.
func (n *Node) JobProgress(jobID uint32) (scanned int64, done bool, running bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	j, found := n.mu.jobs[jobID]
	if !found || j.group == nil {
		return 0, false, false
	}
	done = true
	for _, a := range j.actors {
		for _, e := range a.executors {
			if p, isP := e.(Progress); isP {
				s, d := p.Progress()
				scanned += s
				done = done && d
			}
		}
	}
	return scanned, done, true
}
