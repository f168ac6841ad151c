package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/compute"
	"github.com/sluice-db/sluice/internal/meta"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
)

// Options configures an engine.
type Options struct {
	// Dir is the data directory; empty with InMemory for tests.
	Dir      string
	InMemory bool
	// FS overrides the filesystem (crash tests).
	FS vfs.FS
	// BarrierInterval is the time between barriers (default 1s).
	BarrierInterval time.Duration
	// Parallelism is the number of actors per distributed fragment
	// (default: the number of cores).
	Parallelism  int
	ChunkSize    int
	CacheEntries int
	Logger       *slog.Logger
	// CheckInserts looks up every key a view's materialize inserts (and a
	// primary-key table's, plan.Materialize.CheckedWrites), so that an
	// insert over a stored row (a bug upstream, or a statement that did
	// not check its key) is reported (InconsistentOps): a point read per
	// row. The tests turn it on; the playground leaves it off and trusts
	// the input, as RisingWave's materialize does by default: inserts and
	// update pairs that keep their key are written unread. Deletes are
	// checked either way.
	CheckInserts bool
	// WrapActorRoot is compute.Config.WrapRoot: a fault-injection seam for
	// recovery tests, nil in production.
	WrapActorRoot func(job uint32, actor stream.ActorID, root stream.Executor) stream.Executor
	// AcceptDataLoss opens a store whose write-ahead log lost acknowledged
	// writes (storage.Options.AcceptDataLoss).
	AcceptDataLoss bool
	// CommitDelay is the longest a WAL sync waits for concurrent writes to
	// share it (storage.Options.CommitDelay): 0 is the default, negative
	// never waits.
	CommitDelay time.Duration
	// BulkLoadFrom is the fewest rows for which a COPY into a table keyed
	// by its hidden row id writes its rows once, as the table's file
	// (bulk_load.go): 0 is DefaultBulkLoadFrom, negative never.
	BulkLoadFrom int64
}

// DefaultBulkLoadFrom is Options.BulkLoadFrom's default: a file and an
// ingest cost more than the table actors' seal of a few rows.
const DefaultBulkLoadFrom = 1 << 16

// DefaultCommitDelay is storage.DefaultCommitDelay, the playground's
// --commit-delay.
const DefaultCommitDelay = storage.DefaultCommitDelay

// CommitDelayFlag is Options.CommitDelay for a --commit-delay flag's
// value, where 0 (or less) syncs at once; the option's 0 is the default.
func CommitDelayFlag(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// Engine is one Sluice process.
type Engine struct {
	opts    Options
	store   *storage.Store
	catalog *catalog.Catalog
	node    *compute.Node
	coord   *meta.Coordinator
	group   *task.Group
	log     *slog.Logger

	// deployMu serializes changes to the compute node's graph: a recovery's
	// stop-and-rebuild against a job's deployment or teardown.
	deployMu sync.Mutex
	rowIDs   rowIDAllocator
	trunc    truncator
	rowErrs  rowErrorCounter
	ctl      controlSettings
	closeOne sync.Once

	// rebuildMu serializes RECOVER MATERIALIZED VIEW (recover_job.go).
	rebuildMu sync.Mutex
	// creates are the waits of CREATEs for their jobs, ended by a drop.
	creates createWaiters

	// barriers records committed epochs and recoveries (metrics_barrier.go);
	// opened is when the engine opened.
	barriers *barrierStats
	ddl      *ddlStats // metrics_ddl.go
	guard    *ampGuard // guard.go
	opened   time.Time

	// inconsistent counts view materialize inputs that contradict the view.
	inconsistent inconsistencyCounter
	// tableLocks serialize read-then-write statements per table (latest.go).
	tableLocks tableLocks
	// keyLocks are the rows open transaction blocks changed (txn.go).
	keyLocks keyLocks
}

// Open opens the store and catalog and starts the coordinator, which
// begins with a recovery that rebuilds every job in the catalog. A corrupt
// file in the data directory fails it with an error that says so.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	e, err := open(ctx, opts)
	if err != nil && storage.IsCorruption(err) {
		return nil, &damagedDirError{dir: opts.Dir, err: err}
	}
	return e, err
}

// damagedDirError is Open's error for a corrupt file: one line (Pebble's
// corruption errors carry more on lines of their own) and what to do.
type damagedDirError struct {
	dir string
	err error
}

func (d *damagedDirError) Error() string {
	msg, _, _ := strings.Cut(d.err.Error(), "\n")
	return fmt.Sprintf("the data directory %q is damaged (%s); restore it from a backup", d.dir, msg)
}

func (d *damagedDirError) Unwrap() error { return d.err }

func open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = runtime.NumCPU()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// An epoch running past two barrier intervals is late: its fresh rows
	// go to files as they come, so that its seal, when the barrier
	// arrives (a paused job's), writes little (storage/preseal.go).
	presealAfter := 2 * opts.BarrierInterval
	if presealAfter <= 0 {
		presealAfter = 2 * time.Second
	}
	store, err := storage.Open(ctx, storage.Options{Dir: opts.Dir, InMemory: opts.InMemory, FS: opts.FS, Logger: opts.Logger,
		AcceptDataLoss: opts.AcceptDataLoss, CommitDelay: opts.CommitDelay, PresealAfter: presealAfter})
	if err != nil {
		if strings.Contains(err.Error(), "lock") || strings.Contains(err.Error(), "temporarily unavailable") {
			return nil, fmt.Errorf("data directory %q is in use by another Sluice process (%w)", opts.Dir, err)
		}
		return nil, err
	}
	if err := checkFormat(ctx, store, opts.Dir); err != nil {
		_ = store.Close()
		return nil, err
	}
	cat, err := catalog.Open(ctx, store)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	e := &Engine{opts: opts, store: store, catalog: cat, log: opts.Logger}
	if err := e.replayTails(ctx); err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("replay acknowledged writes: %w", err)
	}
	e.rowIDs.init(store)
	e.inconsistent.log, e.inconsistent.cat = opts.Logger, cat
	e.barriers, e.ddl, e.guard, e.opened = newBarrierStats(), newDDLStats(), newAmpGuard(), time.Now()
	e.coord = meta.New(meta.Config{BarrierInterval: opts.BarrierInterval, Logger: opts.Logger,
		AfterCommit: e.afterCommit, Observer: e.barriers}, store, nil, e)
	e.node = compute.NewNode(store, e.coord, compute.Config{
		ChunkSize: opts.ChunkSize, CacheEntries: opts.CacheEntries, OnRowError: e.rowErrs.add,
		OnInconsistentOp: e.inconsistent.add, CheckInserts: opts.CheckInserts, WrapRoot: opts.WrapActorRoot,
		OnAmplification: e.guard.report})
	e.coord.SetCompute(e.node)
	g, gctx := task.NewGroup(context.WithoutCancel(ctx))
	e.group = g
	e.trunc.ctx = gctx
	g.Go(gctx, "coordinator", e.coord.Run)
	g.Go(gctx, "amplification-guard", e.runGuard)
	if err := e.waitRecovered(ctx, 1); err != nil {
		_ = e.Close()
		return nil, err
	}
	// Jobs a previous process was still creating finish in the background
	// (or are cancelled by CANCEL JOBS).
	for _, r := range cat.All() {
		if r.State == catalog.StateCreating {
			e.finishInBackground(r)
		}
	}
	return e, nil
}

// Close stops every job and the coordinator and closes the store.
func (e *Engine) Close() error {
	var err error
	e.closeOne.Do(func() {
		e.group.Cancel()
		_ = e.group.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if stopErr := e.node.StopAll(ctx); stopErr != nil {
			err = stopErr
		}
		if cerr := e.store.Close(); cerr != nil && err == nil {
			err = cerr
		}
	})
	return err
}

// Store returns the engine's store (tests, batch reads).
func (e *Engine) Store() *storage.Store { return e.store }

// Catalog returns the engine's catalog.
func (e *Engine) Catalog() *catalog.Catalog { return e.catalog }

// Coordinator returns the meta coordinator.
func (e *Engine) Coordinator() *meta.Coordinator { return e.coord }

// Node returns the compute node.
func (e *Engine) Node() *compute.Node { return e.node }

// RowErrors returns how many row-level expression errors streaming jobs
// turned into NULL.
func (e *Engine) RowErrors() uint64 { return e.rowErrs.load() }

// Flush waits until every write acknowledged before the call is reflected
// in every table and view: it requests a barrier and waits for its epoch to
// commit.
func (e *Engine) Flush(ctx context.Context) error {
	ep, err := e.coord.RequestBarrier(ctx, "flush")
	if err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return e.store.WaitCommitted(ctx, ep)
}

func toDesc(rel *catalog.Relation) storage.TableDesc { return storage.TableDesc(rel.Table) }
