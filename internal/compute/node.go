package compute

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// Events is how the node reports to the meta side.
type Events interface {
	stream.BarrierSink
	// ActorFailed reports an actor that stopped with an error of its own.
	// gen is the node's generation when the actor started: a report from
	// an actor of an earlier generation (torn down by a recovery since) is
	// stale, and must not start another recovery — actor ids are reused
	// when a recovery redeploys a job.
	ActorFailed(actor stream.ActorID, gen uint64, err error)
}

// Config tunes the actors a node builds.
type Config struct {
	ChunkSize       int
	CacheEntries    int
	ChannelCapacity int
	// OnRowError counts row-level expression errors in streaming jobs.
	OnRowError func(error)
	// OnAmplification hears of join rows over their job's amplification
	// limit (stream.Env.OnAmplification).
	OnAmplification func(actor stream.ActorID, key string, matches int64) bool
	// OnInconsistentOp counts changes a view's materialize found
	// contradicting its stored rows (see plan.Materialize.View).
	OnInconsistentOp func(table uint32, kind string, key types.Row)
	// CheckInserts is stream.Env.CheckInserts.
	CheckInserts bool
	// WrapRoot, when set, wraps every actor's executor chain as it is
	// built. It is the fault-injection seam of recovery tests (an executor
	// that fails mid-epoch); production leaves it nil.
	WrapRoot func(job uint32, actor stream.ActorID, root stream.Executor) stream.Executor
}

// Node is one compute node: it owns running jobs and their actors.
type Node struct {
	store  *storage.Store
	events Events
	cfg    Config

	// gen counts StopAll calls: actors started after the n-th belong to
	// generation n.
	gen atomic.Uint64

	mu struct {
		sync.Mutex
		jobs   map[uint32]*job
		actors map[stream.ActorID]*actor
	}
}

type actor struct {
	id       stream.ActorID
	job      uint32
	fragment uint32
	a        *stream.Actor
	inbox    chan *stream.Barrier
	// inputs holds the receiving ends of channels into this actor, by
	// upstream fragment and port.
	inputs map[inputKey][]*stream.Input
	// dispatchers built before start.
	dispatchers []stream.Dispatcher
	throttle    *stream.Throttle
	env         *stream.Env
	root        *plan.Node
	// executors are the chain's executors, for progress reporting.
	executors []stream.Executor
	// feeds are the sending ends of every channel into this actor,
	// including ones handed to upstream actors of other jobs by an Add
	// mutation still on its way: dropping the actor detaches them all.
	feeds []*stream.Output
	// stats count its rows and its waits (stats.go).
	stats stream.ActorStats
}

type job struct {
	id     uint32
	actors []*actor
	group  *task.Group
	ctx    context.Context
}

// NewNode returns a node with no jobs.
func NewNode(store *storage.Store, events Events, cfg Config) *Node {
	n := &Node{store: store, events: events, cfg: cfg}
	n.mu.jobs = map[uint32]*job{}
	n.mu.actors = map[stream.ActorID]*actor{}
	return n
}

// inboxCapacity bounds barriers queued at a source actor; the barrier
// manager never has more in flight than this.
const inboxCapacity = 64

func (n *Node) newActor(id stream.ActorID, jobID uint32, fr *plan.Fragment, index int, vnodes []uint16) *actor {
	th := stream.NewThrottle()
	inbox := make(chan *stream.Barrier, inboxCapacity)
	env := &stream.Env{
		Store: n.store, ActorID: id, VNodes: vnodes, Index: index, Parallelism: fr.Parallelism, Throttle: th,
		Expr: &expr.Context{StableRandom: true}, ChunkSize: n.cfg.ChunkSize,
		CacheEntries: n.cfg.CacheEntries, Barriers: inbox, OnInconsistentOp: n.cfg.OnInconsistentOp,
		CheckInserts: n.cfg.CheckInserts, Downstream: &stream.Downstream{}, OnAmplification: n.cfg.OnAmplification,
	}
	a := &actor{id: id, job: jobID, fragment: fr.ID, inbox: inbox, inputs: map[inputKey][]*stream.Input{},
		throttle: th, env: env, root: fr.Root}
	env.Stats = &a.stats
	env.Expr.OnRowError = func(err error) {
		a.stats.RowErrors.Add(1)
		if n.cfg.OnRowError != nil {
			n.cfg.OnRowError(err)
		}
	}
	return a
}

// Actor returns the running actor with id, for control commands.
func (n *Node) actor(id stream.ActorID) (*actor, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a, ok := n.mu.actors[id]
	return a, ok
}

// Control delivers a control command to actors at once. Unknown actors are
// skipped: they may have exited already.
func (n *Node) Control(ids []stream.ActorID, c stream.Control) {
	for _, id := range ids {
		if a, ok := n.actor(id); ok && a.a != nil {
			a.a.HandleControl(c)
		}
	}
}

// Inject puts a barrier into the inboxes of source actors. It never blocks
// on a stuck actor: an inbox is sized above the barrier manager's in-flight
// limit, and a dead actor's inbox is skipped.
func (n *Node) Inject(b *stream.Barrier, sources []stream.ActorID) error {
	for _, id := range sources {
		a, ok := n.actor(id)
		if !ok {
			return fmt.Errorf("compute: inject into unknown actor %d", id)
		}
		select {
		case a.inbox <- b:
		default:
			return fmt.Errorf("compute: barrier inbox of actor %d is full", id)
		}
	}
	return nil
}

// Jobs returns the ids of running jobs.
func (n *Node) Jobs() []uint32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := make([]uint32, 0, len(n.mu.jobs))
	for id := range n.mu.jobs {
		ids = append(ids, id)
	}
	return ids
}

// JobActors returns the actor ids of a running job.
func (n *Node) JobActors(id uint32) []stream.ActorID {
	n.mu.Lock()
	defer n.mu.Unlock()
	j, ok := n.mu.jobs[id]
	if !ok {
		return nil
	}
	ids := make([]stream.ActorID, len(j.actors))
	for i, a := range j.actors {
		ids[i] = a.id
	}
	return ids
}

// deliberate tells run that an actor's exit was a deliberate teardown.
func deliberate(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, stream.ErrStopped)
}

// Generation returns the node's current generation (see Events.ActorFailed).
func (n *Node) Generation() uint64 { return n.gen.Load() }

// inputKey names one edge into an actor: the upstream fragment, and the
// port telling apart several edges from that fragment (plan.Merge.Port).
type inputKey struct {
	frag, port uint32
}
