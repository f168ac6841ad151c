package stream

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// Executor is one step of an actor's pull-based chain. Next blocks until it
// has a message, and returns ctx.Err() promptly when ctx is cancelled: any
// loop that may produce many chunks for one input (a join probe, a backfill
// scan) checks ctx at least once per output chunk.
//
// A chain's first message is a barrier (the epoch the actor starts in), and
// barriers' epochs strictly increase; CheckedExecutor asserts both.
type Executor interface {
	Next(ctx context.Context) (Message, error)
	// Schema returns the output column types.
	Schema() []types.Type
}

// Releaser is implemented by executors that hold a resource beyond their
// state tables (a backfill's storage snapshot). The actor's owner calls
// Release once the actor's goroutine has returned, however it ended: a
// stop while the executor is not inside Next never reaches its own
// cleanup.
type Releaser interface {
	Release()
}

// Env is what building an actor's executors needs from the compute node.
type Env struct {
	Store   *storage.Store
	ActorID ActorID
	// VNodes lists the vnodes this actor owns (nil = all).
	VNodes []uint16
	// Index is the actor's place among its fragment's Parallelism actors
	// (a connector source reads the splits s with s mod Parallelism =
	// Index).
	Index, Parallelism int
	// Expr is the evaluation context for the actor: non-strict, so a row
	// error yields NULL and is counted.
	Expr *expr.Context
	// Throttle is the actor's rate limit and pause switch, set through its
	// control channel.
	Throttle *Throttle
	// ChunkSize is the target rows per output chunk.
	ChunkSize int
	// CacheEntries bounds each stateful executor's in-memory cache.
	CacheEntries int
	// Barriers is the actor's barrier inbox; only source executors (table
	// source, values) read it. The barrier manager injects into it.
	Barriers <-chan *Barrier
	// OnExecutor, if set, sees every executor built for the actor (the
	// compute node keeps backfill executors to report progress).
	OnExecutor func(Executor)
	// OnInconsistentOp, if set, sees every change a view's materialize
	// found contradicting its stored rows (kind says how), with the key.
	OnInconsistentOp func(table uint32, kind string, key types.Row)
	// CheckInserts makes a view's materialize look up each key it
	// inserts, to report an insert over a stored row; without it a view
	// trusts its input (a consistent change stream of its key) and writes
	// inserts and key-keeping update pairs without a read. A table's
	// materialize always reads.
	CheckInserts bool
	// Downstream says whether the actor's output goes anywhere (nil:
	// assume it does).
	Downstream *Downstream
	// Stats are the actor's counters, to which executors with their own
	// (a join's amplification) add theirs; nil in tests.
	Stats *ActorStats
	// OnAmplification, if set, hears of a join row that matched more rows
	// than Stats.AmpLimit: the actor, the join key as text and the
	// matches so far. It must not block; false says it dropped the
	// report, and the join reports again.
	OnAmplification func(actor ActorID, key string, matches int64) bool
}

// ChunkSizeOrDefault returns the configured chunk size.
func (e *Env) ChunkSizeOrDefault() int {
	if e == nil || e.ChunkSize <= 0 {
		return types.DefaultChunkSize
	}
	return e.ChunkSize
}

// CacheOrDefault returns the configured cache size.
func (e *Env) CacheOrDefault() int {
	if e == nil || e.CacheEntries <= 0 {
		return 1 << 16
	}
	return e.CacheEntries
}

// VNodeBitmap returns the actor's vnodes as the bitmap storage.OpenTable
// takes; nil means all vnodes.
func (e *Env) VNodeBitmap() types.Bitmap {
	if e == nil || e.VNodes == nil {
		return nil
	}
	var b types.Bitmap
	for _, v := range e.VNodes {
		b.Set(int(v))
	}
	return b
}

// OpenTable opens a state table described by a plan for this actor: owned
// by the actor (so an immediate drop can discard its uncommitted writes)
// and restricted to its vnodes. An actor that owns no vnodes is refused:
// an empty bitmap would read as "all vnodes" and the actor would see state
// that belongs to its siblings.
func (e *Env) OpenTable(t plan.Table) (*storage.StateTable, error) {
	if e != nil && e.VNodes != nil && len(e.VNodes) == 0 {
		return nil, fmt.Errorf("stream: actor %d owns no vnodes", e.ActorID)
	}
	return e.openTable(t, e.VNodeBitmap())
}

// OpenTableAllVNodes opens a state table owned by this actor over every
// vnode. It is for tables whose rows are not placed by the actor's vnodes:
// a table source's offsets (keyed by log split) and a backfill's progress
// (keyed by upstream vnode, which actors own disjointly).
func (e *Env) OpenTableAllVNodes(t plan.Table) (*storage.StateTable, error) {
	return e.openTable(t, nil)
}

func (e *Env) openTable(t plan.Table, vnodes types.Bitmap) (*storage.StateTable, error) {
	if e == nil || e.Store == nil {
		return nil, fmt.Errorf("stream: table %d: no state store in the environment", t.ID)
	}
	return e.Store.OpenTable(storage.TableDesc(t), storage.ActorID(e.ActorID), vnodes)
}
