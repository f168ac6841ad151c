package compute

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"strconv"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/build"
	"github.com/sluice-db/sluice/internal/task"
)

// ErrJobDeployed is returned by Prepare for a job that is already
// deployed (a recovery rebuilt it from the catalog first).
var ErrJobDeployed = errors.New("job is already deployed")

// Deployment is a job's plan with actor ids assigned: Actors[f] lists the
// actors of fragment f, index k owning the k-th vnode range.
type Deployment struct {
	Job    *plan.Job
	Actors map[uint32][]stream.ActorID
}

// Prepare creates the actors and channels of a job without starting them.
// Edges from running actors of other jobs are returned as dispatchers to
// add with the job's first barrier (the Add mutation); edges from actors
// not yet started are wired into them directly (recovery).
func (n *Node) Prepare(ctx context.Context, d Deployment) (map[stream.ActorID][]stream.Dispatcher, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.mu.jobs[d.Job.ID]; ok {
		return nil, fmt.Errorf("compute: job %d: %w", d.Job.ID, ErrJobDeployed)
	}
	j := &job{id: d.Job.ID}
	byFrag := map[uint32][]*actor{}
	for _, fr := range d.Job.Fragments {
		ids := d.Actors[fr.ID]
		if len(ids) != fr.Parallelism || len(ids) == 0 {
			return nil, fmt.Errorf("compute: fragment %d has %d actors, parallelism %d", fr.ID, len(ids), fr.Parallelism)
		}
		owners := stream.EvenVNodeOwners(len(ids))
		for k, id := range ids {
			if _, taken := n.mu.actors[id]; taken {
				return nil, fmt.Errorf("compute: actor id %d of job %d is already in use", id, d.Job.ID)
			}
			var vnodes []uint16
			if !fr.Singleton {
				vnodes = stream.VNodesOf(owners, k)
			}
			a := n.newActor(id, d.Job.ID, fr, k, vnodes)
			byFrag[fr.ID] = append(byFrag[fr.ID], a)
			j.actors = append(j.actors, a)
		}
	}
	if err := n.connectInternal(d.Job, byFrag); err != nil {
		return nil, err
	}
	adds, err := n.connectUpstreamsLocked(d.Job, byFrag)
	if err != nil {
		return nil, err
	}
	n.mu.jobs[j.id] = j
	for _, a := range j.actors {
		n.mu.actors[a.id] = a
	}
	return adds, nil
}

func (n *Node) connectInternal(jb *plan.Job, byFrag map[uint32][]*actor) error {
	for _, fr := range jb.Fragments {
		for _, d := range fr.Outputs {
			down, ok := byFrag[d.Downstream]
			if !ok {
				return fmt.Errorf("compute: fragment %d dispatches to unknown fragment %d", fr.ID, d.Downstream)
			}
			for k, up := range byFrag[fr.ID] {
				disp, err := n.connect(up, k, down, inputKey{frag: fr.ID, port: d.Port}, d)
				if err != nil {
					return err
				}
				up.dispatchers = append(up.dispatchers, disp)
			}
		}
	}
	return nil
}

// connectUpstreamsLocked wires no-shuffle edges from other jobs' actors.
func (n *Node) connectUpstreamsLocked(jb *plan.Job, byFrag map[uint32][]*actor) (map[stream.ActorID][]stream.Dispatcher, error) {
	adds := map[stream.ActorID][]stream.Dispatcher{}
	for _, e := range jb.Upstreams {
		ups := n.fragmentActorsLocked(e.UpstreamFragment)
		down := byFrag[e.Downstream]
		if len(ups) != len(down) || len(ups) == 0 {
			return nil, fmt.Errorf("compute: upstream fragment %d has %d actors, downstream %d has %d", e.UpstreamFragment, len(ups), e.Downstream, len(down))
		}
		for k, up := range ups {
			key := inputKey{frag: e.UpstreamFragment, port: e.Port}
			disp, err := n.connect(up, k, down, key, plan.Dispatch{Kind: plan.DispatchNoShuffle, Downstream: e.Downstream})
			if err != nil {
				return nil, err
			}
			if up.a != nil {
				adds[up.id] = append(adds[up.id], disp)
			} else {
				up.dispatchers = append(up.dispatchers, disp)
			}
		}
	}
	return adds, nil
}

// fragmentActorsLocked returns the actors of a fragment in vnode order.
func (n *Node) fragmentActorsLocked(frag uint32) []*actor {
	var out []*actor
	for _, j := range n.mu.jobs {
		for _, a := range j.actors {
			if a.fragment == frag {
				out = append(out, a)
			}
		}
	}
	return out
}

// connect makes the channels from upstream actor up (index k of its
// fragment) to the downstream actors d connects it with, and returns up's
// dispatcher for them.
func (n *Node) connect(up *actor, k int, down []*actor, key inputKey, d plan.Dispatch) (stream.Dispatcher, error) {
	link := func(to *actor) *stream.Output {
		out, in := stream.NewChannel(up.id, to.id, n.cfg.ChannelCapacity)
		stream.CountFor(out, in, &up.stats, &to.stats)
		to.inputs[key] = append(to.inputs[key], in)
		to.feeds = append(to.feeds, out)
		return out
	}
	switch d.Kind {
	case plan.DispatchSimple:
		if len(down) != 1 {
			return nil, fmt.Errorf("compute: simple dispatch to %d actors", len(down))
		}
		return &stream.SimpleDispatcher{Out: link(down[0])}, nil
	case plan.DispatchNoShuffle:
		if k >= len(down) {
			return nil, fmt.Errorf("compute: no-shuffle from actor %d has no partner", k)
		}
		return &stream.SimpleDispatcher{Out: link(down[k])}, nil
	case plan.DispatchBroadcast:
		outs := make([]*stream.Output, len(down))
		for i, to := range down {
			outs[i] = link(to)
		}
		return &stream.BroadcastDispatcher{Outs: outs}, nil
	case plan.DispatchHash:
		// A key past the upstream's columns would panic in the running
		// actor's hash, every time recovery rebuilt it.
		if err := checkDistKey(d.DistKey, up.root); err != nil {
			return nil, err
		}
		outs := make([]*stream.Output, len(down))
		for i, to := range down {
			outs[i] = link(to)
		}
		return stream.NewHashDispatcher(outs, d.DistKey, stream.EvenVNodeOwners(len(down)))
	}
	return nil, fmt.Errorf("compute: unknown dispatch kind %q", d.Kind)
}

// Start builds the executor chains of a prepared job and runs its actors.
// On a build error nothing of the job keeps running.
func (n *Node) Start(ctx context.Context, jobID uint32) error {
	n.mu.Lock()
	j, ok := n.mu.jobs[jobID]
	started := ok && j.group != nil
	n.mu.Unlock()
	if !ok {
		return fmt.Errorf("compute: start of unknown job %d", jobID)
	}
	if started {
		return nil // a recovery rebuilt and started it meanwhile
	}
	g, gctx := task.NewGroup(context.WithoutCancel(ctx))
	for _, a := range j.actors {
		if err := n.buildActor(g, gctx, a); err != nil {
			g.Cancel()
			_ = g.Wait()
			n.releaseJob(j)
			n.forget(j)
			return err
		}
	}
	n.mu.Lock()
	j.group, j.ctx = g, gctx
	n.mu.Unlock()
	for _, a := range j.actors {
		n.run(g, gctx, a)
	}
	return nil
}

func (n *Node) buildActor(g *task.Group, ctx context.Context, a *actor) error {
	a.env.OnExecutor = func(e stream.Executor) {
		n.mu.Lock()
		a.executors = append(a.executors, e)
		n.mu.Unlock()
	}
	merges := func(m *plan.Merge) ([]*stream.Input, error) {
		ins, ok := a.inputs[inputKey{frag: m.UpstreamFragment, port: m.Port}]
		if !ok {
			return nil, fmt.Errorf("compute: actor %d has no inputs from fragment %d port %d", a.id, m.UpstreamFragment, m.Port)
		}
		return ins, nil
	}
	root, err := build.Actor(a.env, g, a.root, merges)
	if err != nil {
		return fmt.Errorf("actor %d: %w", a.id, err)
	}
	if n.cfg.WrapRoot != nil {
		root = n.cfg.WrapRoot(a.job, a.id, root)
	}
	// Read the dispatchers and publish the actor under one lock: a
	// concurrent Prepare either appends before (and is included) or sees
	// a.a set and hands its dispatcher out as an Add instead.
	n.mu.Lock()
	a.a = stream.NewActor(a.id, a.job, root, a.dispatchers, n.events, a.throttle)
	a.a.Stats = &a.stats
	a.a.TrackDownstream(a.env.Downstream)
	n.mu.Unlock()
	return nil
}

func (n *Node) run(g *task.Group, ctx context.Context, a *actor) {
	gen := n.gen.Load()
	g.Go(ctx, fmt.Sprintf("actor-%d", a.id), func(ctx context.Context) error {
		// The labels mark every goroutine of the job in a goroutine profile:
		// goroutines the actor starts (input pumps, blocking waits) inherit
		// them, so a test or an operator can tell a leaked one by its job.
		var err error
		pprof.Do(ctx, ActorLabels(a.job, a.id), func(ctx context.Context) {
			err = task.Run(ctx, fmt.Sprintf("actor-%d", a.id), a.a.Run)
		})
		if err != nil && !deliberate(ctx, err) {
			n.events.ActorFailed(a.id, gen, err)
		}
		return nil
	})
}

// ActorLabels are the pprof labels of an actor's goroutines: "job" and
// "actor", as decimal ids.
func ActorLabels(job uint32, actor stream.ActorID) pprof.LabelSet {
	return pprof.Labels("job", strconv.FormatUint(uint64(job), 10), "actor", strconv.FormatUint(uint64(actor), 10))
}

// releaseJob lets go of what the job's executors hold outside the state
// tables (a backfill's snapshot). Only once every goroutine of the job has
// exited: an actor's Run may return while a join's input pumps are still
// inside a backfill's Next.
func (n *Node) releaseJob(j *job) {
	for _, a := range j.actors {
		n.release(a)
	}
}

func (n *Node) release(a *actor) {
	n.mu.Lock()
	es := a.executors
	n.mu.Unlock()
	for _, e := range es {
		if r, ok := e.(stream.Releaser); ok {
			r.Release()
		}
	}
}
