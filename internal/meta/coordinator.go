package meta

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluice-db/sluice/internal/compute"
	"github.com/sluice-db/sluice/internal/meta/barrier"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Recoverer rebuilds the graph: it stops every actor, drops uncommitted
// writes and deploys every job of the catalog again; it returns the
// rebuilt topology.
type Recoverer interface {
	Rebuild(ctx context.Context) ([]barrier.JobSpec, error)
	// DeleteJobState deletes a dropped job's committed state and finishes
	// its drop in the catalog. It runs in the background.
	DeleteJobState(ctx context.Context, job uint32) error
}

// Config configures the coordinator.
type Config struct {
	BarrierInterval time.Duration
	MaxInFlight     int
	Logger          *slog.Logger
	// AfterCommit, if set, is called on the coordinator goroutine after
	// each committed epoch; it must not block (start background work).
	AfterCommit func(epoch uint64)
	// Observer, if set, hears each committed epoch's timings and each
	// recovery (metrics), on the coordinator goroutine.
	Observer Observer
}

// Observer hears of the coordinator's work for metrics. Its methods run
// on the coordinator goroutine and must not block.
type Observer interface {
	EpochCommitted(t EpochTiming)
	RecoveryStarted(reason barrier.RecoveryReason)
}

// EpochTiming is one committed epoch's barrier: injected, collected by
// every actor (its commit began), and committed to the store.
type EpochTiming struct {
	Epoch                          uint64
	Checkpoint                     bool
	Injected, Collected, Committed time.Time
}

// Coordinator owns the barrier machine; see the package doc.
type Coordinator struct {
	cfg     Config
	store   *storage.Store
	compute *compute.Node
	rec     Recoverer
	events  chan event
	bg      *task.Group
	// adds holds, by job, the dispatchers its Add barrier installs.
	adds map[uint32]map[stream.ActorID][]stream.Dispatcher
	m    *barrier.Machine
	// recoveries counts completed recoveries (for tests and metrics).
	recoveries int
	status     chan chan Status
}

// Status is a snapshot of the coordinator for SHOW and metrics.
type Status struct {
	Barrier    barrier.Status
	Recoveries int
}

// New returns a coordinator; Run must be called to start it.
func New(cfg Config, store *storage.Store, node *compute.Node, rec Recoverer) *Coordinator {
	if cfg.BarrierInterval <= 0 {
		cfg.BarrierInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := barrier.New(barrier.Config{Interval: cfg.BarrierInterval, MaxInFlight: cfg.MaxInFlight}, store.CommittedEpoch())
	return &Coordinator{cfg: cfg, store: store, compute: node, rec: rec, m: m,
		events: make(chan event, 4096), adds: map[uint32]map[stream.ActorID][]stream.Dispatcher{},
		status: make(chan chan Status)}
}

// SetCompute gives the coordinator its compute node; the two reference
// each other (actors report to the coordinator), so one is set after both
// exist. It must be called before Run.
func (c *Coordinator) SetCompute(n *compute.Node) { c.compute = n }

// Run performs the coordinator's work until ctx is done. Background work
// (state deletion) runs in a group that Run waits for before returning.
func (c *Coordinator) Run(ctx context.Context) error {
	g, gctx := task.NewGroup(ctx)
	c.bg = g
	defer func() { g.Cancel(); _ = g.Wait() }()
	ticker := time.NewTicker(c.cfg.BarrierInterval / 4)
	defer ticker.Stop()
	c.perform(gctx)
	for {
		select {
		case <-gctx.Done():
			return nil
		case <-ticker.C:
			// The time now, not the tick's: a tick read late (the loop
			// was committing) would date the barrier it injects early,
			// and every latency measured from it would be too long.
			c.m.Tick(time.Now())
		case ev := <-c.events:
			ev.apply(c)
		case reply := <-c.status:
			reply <- Status{Barrier: c.m.Status(time.Now()), Recoveries: c.recoveries}
		}
		c.perform(gctx)
	}
}

// perform drains the machine's actions and carries them out in order.
func (c *Coordinator) perform(ctx context.Context) {
	// Stop at shutdown: a failed commit leads to recovery, whose rebuild
	// fails on the cancelled context, which would otherwise loop forever.
	for c.m.HasReady() && ctx.Err() == nil {
		for _, a := range c.m.Ready() {
			c.performOne(ctx, a)
		}
	}
}

func (c *Coordinator) performOne(ctx context.Context, a barrier.Action) {
	switch a := a.(type) {
	case barrier.Inject:
		c.inject(a)
	case barrier.Commit:
		c.commit(ctx, a)
	case barrier.StartRecovery:
		c.recover(ctx, a)
	case barrier.AbortEpochs:
		c.store.AbortUncommitted()
	case barrier.DiscardActorWrites:
		for _, id := range a.Actors {
			// The actors may still be running: an immediate drop does
			// not wait for them to exit.
			c.store.FenceAndDiscard(storage.ActorID(id))
		}
	case barrier.DeleteState:
		job := uint32(a.Job)
		c.bg.Go(ctx, fmt.Sprintf("delete-state-%d", job), func(ctx context.Context) error {
			if err := c.rec.DeleteJobState(ctx, job); err != nil {
				c.cfg.Logger.Error("delete state", "job", job, "err", err)
			}
			return nil
		})
	}
}

func (c *Coordinator) inject(a barrier.Inject) {
	// The horizon is taken before any source can see the barrier.
	b := &stream.Barrier{Epoch: a.Epoch.Curr, Checkpoint: a.Checkpoint, DMLHorizon: c.store.DMLHorizon(),
		Time: types.TimestamptzFromTime(a.Time)}
	switch mut := a.Mutation.(type) {
	case barrier.Add:
		job := uint32(mut.Job.ID)
		b.Mutation = &stream.AddMutation{JobID: job, Dispatchers: c.adds[job]}
		delete(c.adds, job)
	case barrier.Stop:
		b.Mutation = stopMutation(mut)
	}
	sources := make([]stream.ActorID, len(a.Sources))
	for i, s := range a.Sources {
		sources[i] = stream.ActorID(s)
	}
	if err := c.compute.Inject(b, sources); err != nil {
		c.cfg.Logger.Error("inject", "epoch", b.Epoch, "err", err)
		_ = c.m.ActorFailed(a.Sources[0], err)
	}
}

func (c *Coordinator) commit(ctx context.Context, a barrier.Commit) {
	// The machine emits a Commit as the epoch's last actor collects it
	// (or, when an older commit held it back, as that one is done).
	collected := time.Now()
	err := c.store.Commit(ctx, a.Epoch.Curr, nil)
	if err != nil {
		c.cfg.Logger.Error("commit", "epoch", a.Epoch.Curr, "err", err)
		_ = c.m.CommitFailed(a.Epoch.Curr, err)
		return
	}
	now := time.Now()
	_ = c.m.CommitDone(now, a.Epoch.Curr)
	if c.cfg.Observer != nil {
		c.cfg.Observer.EpochCommitted(EpochTiming{Epoch: a.Epoch.Curr, Checkpoint: a.Checkpoint,
			Injected: a.InjectedAt, Collected: collected, Committed: now})
	}
	if c.cfg.AfterCommit != nil {
		c.cfg.AfterCommit(a.Epoch.Curr)
	}
}

// rebuild retries a failed rebuild with backoff: a graph left torn down
// would stop every job until the next failure.
func (c *Coordinator) rebuild(ctx context.Context) ([]barrier.JobSpec, error) {
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		jobs, err := c.rec.Rebuild(ctx)
		if err == nil || attempt == 8 || ctx.Err() != nil {
			return jobs, err
		}
		c.cfg.Logger.Warn("recovery: rebuild failed, retrying", "attempt", attempt, "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// recover asks the Recoverer to stop every actor, drop uncommitted writes
// and rebuild every job from the catalog. If rebuilding fails, the machine
// is told so with an empty topology and the failure is logged; the next
// actor failure or RECOVER tries again.
func (c *Coordinator) recover(ctx context.Context, a barrier.StartRecovery) {
	c.cfg.Logger.Info("recovery", "from", a.FromEpoch, "reason", a.Reason, "cause", a.Cause)
	if c.cfg.Observer != nil {
		c.cfg.Observer.RecoveryStarted(a.Reason)
	}
	clear(c.adds)
	jobs, err := c.rebuild(ctx)
	if err != nil {
		c.cfg.Logger.Error("recovery: rebuild", "err", err)
		jobs = nil
	}
	if err := c.m.RecoveryDone(time.Now(), jobs); err != nil {
		c.cfg.Logger.Error("recovery done", "err", err)
	}
	c.recoveries++
}
