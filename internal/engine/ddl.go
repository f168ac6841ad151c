package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/compute"
	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/meta/barrier"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/overtake"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/types"
)

// RowIDColumn is the hidden key column of a table declared without a
// primary key.
const RowIDColumn = "_row_id"

// TableSpec describes a table to create.
type TableSpec struct {
	Name    string
	Columns []catalog.Column
	// PK lists primary-key columns; nil adds a hidden _row_id key.
	PK         []int
	AppendOnly bool
	Definition string
	// Owner is the user creating it (catalog.Relation.Owner).
	Owner string
	// Connector, if set, feeds the table from a connector (its Columns
	// are the table's declared columns, RowID set without a key).
	Connector *connector.Spec
	// Watermark, if set, filters late rows before they are stored.
	Watermark *catalog.Watermark
}

// ViewSpec describes a materialized view to create. Plan is the logical
// plan of its query (no Merge nodes; Backfill leaves read other relations'
// tables); its output columns are Columns and PK is its stream key.
type ViewSpec struct {
	Name       string
	Columns    []catalog.Column
	Plan       *plan.Node
	PK         []int
	DependsOn  []uint32
	Definition string
	// Owner is the user creating it (catalog.Relation.Owner).
	Owner string
	// Background returns as soon as the job is registered, without
	// waiting for its backfill.
	Background bool
	// RateLimit, when set, limits the job's rows per second from its first
	// row (0: start paused); ALTER … SET RATE_LIMIT changes it later.
	RateLimit *int64
	// AmpLimit and AmpAction are the amplification guard's limit (0:
	// none) and action (guard.go); Notices, when set, receives the
	// guard's notices about the job.
	AmpLimit  int64
	AmpAction string
	Notices   *NoticeQueue
}

// IDs allocates n fresh ids for a planner building a view's state tables.
func (e *Engine) IDs(ctx context.Context, n int) (*IDBlock, error) {
	first, err := e.catalog.AllocIDs(ctx, n)
	if err != nil {
		return nil, err
	}
	return &IDBlock{next: first, end: first + uint32(n)}, nil
}

// IDBlock is a range of fresh ids.
type IDBlock struct{ next, end uint32 }

// Next returns the next id of the block; it panics when the block is used
// up, which is a bug in how many ids the caller asked for.
func (b *IDBlock) Next() uint32 {
	if b.next >= b.end {
		panic("engine: id block exhausted")
	}
	b.next++
	return b.next - 1
}

func (e *Engine) checkName(name string) error {
	if _, ok := e.catalog.ByName(name); ok {
		return sqlerr.Errorf(sqlerr.DuplicateTable, "relation %q already exists", name)
	}
	return nil
}

// CreateTable creates a table and its job (DML log source → materialize).
func (e *Engine) CreateTable(ctx context.Context, spec TableSpec) (_ *catalog.Relation, err error) {
	defer e.ddl.observe("create_table", time.Now(), &err)
	if err := e.checkName(spec.Name); err != nil {
		return nil, err
	}
	cols := append([]catalog.Column(nil), spec.Columns...)
	pk := spec.PK
	if len(pk) == 0 {
		cols = append(cols, catalog.Column{Name: RowIDColumn, Type: types.TInt64, Hidden: true})
		pk = []int{len(cols) - 1}
	}
	ids, err := e.IDs(ctx, 64+8*e.opts.Parallelism)
	if err != nil {
		return nil, err
	}
	ts := columnTypes(cols)
	rel := &catalog.Relation{ID: ids.Next(), Name: spec.Name, Kind: catalog.KindTable, Columns: cols, PK: pk,
		AppendOnly: spec.AppendOnly, Definition: spec.Definition, Owner: spec.Owner, Watermark: spec.Watermark,
		Table: plan.Table{ID: ids.Next(), Types: ts, PK: pk, DistKey: pk}}
	if spec.Connector != nil {
		src, err := e.connectorInput(rel, *spec.Connector, ids)
		if err != nil {
			return nil, err
		}
		return rel, e.createJob(ctx, rel, withWatermark(rel, src, ids), ids, false)
	}
	// Fresh rows pass a table source's inserts to the materialize still
	// encoded, which a watermark filter between them cannot read.
	src := &plan.Node{Kind: plan.KindTableSource, Schema: ts, StreamKey: pk, AppendOnly: rel.AppendOnly,
		TableSource: &plan.TableSource{TableID: rel.Table.ID, OffsetTable: source.OffsetTable(ids.Next()),
			FreshRows: hasRowID(rel) && rel.Watermark == nil}}
	return rel, e.createJob(ctx, rel, withWatermark(rel, src, ids), ids, false)
}

// CreateMaterializedView creates a view maintained by a new job and, unless
// spec.Background, returns once the view has caught up with existing data.
func (e *Engine) CreateMaterializedView(ctx context.Context, spec ViewSpec) (_ *catalog.Relation, err error) {
	defer e.ddl.observe("create_materialized_view", time.Now(), &err)
	if err := e.checkName(spec.Name); err != nil {
		return nil, err
	}
	if spec.Plan == nil {
		return nil, fmt.Errorf("engine: view %s has no plan", spec.Name)
	}
	ids, err := e.IDs(ctx, 64+8*e.opts.Parallelism)
	if err != nil {
		return nil, err
	}
	ts := columnTypes(spec.Columns)
	rel := &catalog.Relation{ID: ids.Next(), Name: spec.Name, Kind: catalog.KindMaterializedView,
		Columns: spec.Columns, PK: spec.PK, Definition: spec.Definition, DependsOn: spec.DependsOn, Owner: spec.Owner,
		Table: plan.Table{ID: ids.Next(), Types: ts, PK: spec.PK, DistKey: spec.PK}}
	if err := rateLimitOf(rel, spec.RateLimit); err != nil {
		return nil, err
	}
	if err := ampSettingsOf(rel, spec.AmpLimit, spec.AmpAction); err != nil {
		return nil, err
	}
	e.guard.watch(rel.ID, spec.Notices)
	return rel, e.createJob(ctx, rel, spec.Plan, ids, spec.Background)
}

// rateLimitOf records a rate limit given with a CREATE in rel's job.
// Recorded with the job's first catalog write, it holds from the first
// row and after any restart, like an ALTER's.
func rateLimitOf(rel *catalog.Relation, limit *int64) error {
	if limit == nil {
		return nil
	}
	if *limit < 0 {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "rate limit must not be negative: %d", *limit)
	}
	l := *limit
	rel.Job.Control.RateLimit = &l
	return nil
}

func columnTypes(cols []catalog.Column) []types.Type {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
}

// createJob plans, records, deploys and registers rel's job; on any
// failure nothing of it remains.
func (e *Engine) createJob(ctx context.Context, rel *catalog.Relation, input *plan.Node, ids *IDBlock, background bool) error {
	root := jobRoot(rel, input)
	plan.DeriveStreamProps(root)
	frags := &fragmentIDs{ctx: ctx, e: e, ids: ids}
	job, err := plan.Fragmentize(rel.ID, root, plan.FragmentOptions{
		Parallelism: e.opts.Parallelism, NextFragmentID: frags.next, Upstream: e.upstream})
	if err == nil && (rel.Kind == catalog.KindMaterializedView || rel.Kind == catalog.KindSink) {
		addGateTables(job, frags.next)
	}
	if frags.err != nil {
		return frags.err
	}
	if err != nil {
		return sqlerr.Errorf(sqlerr.FeatureNotSupported, "cannot plan %s: %v", rel.Name, err)
	}
	actors, err := e.IDs(ctx, actorCount(job))
	if err != nil {
		return err
	}
	rel.Job = catalog.JobRecord{ID: rel.ID, Plan: job, Actors: assignActors(job, actors),
		MaterializeFragment: job.Fragments[0].ID, StateTables: job.StateTables(), Control: rel.Job.Control}
	rel.State = catalog.StateCreating
	if err := e.catalog.Put(ctx, rel); err != nil {
		return err
	}
	if err := e.deploy(ctx, rel); err != nil {
		e.abandon(rel)
		if errors.Is(err, errJobGone) {
			return sqlerr.New(sqlerr.QueryCanceled, "canceling statement: the job was cancelled or dropped")
		}
		return err
	}
	if background {
		e.finishInBackground(rel)
		return nil
	}
	if err := e.waitCreated(ctx, rel, true); err != nil {
		if errors.Is(err, errReleased) {
			e.finishInBackground(rel)
			return nil
		}
		if errors.Is(err, errJobGone) {
			// CANCEL JOBS or DROP took it down already.
			return sqlerr.New(sqlerr.QueryCanceled, "canceling statement: the job was cancelled or dropped")
		}
		dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = e.dropRelations(dropCtx, []*catalog.Relation{rel})
		return err
	}
	if rel.Job.Control.AmpLimit > 0 {
		e.settleGuard(ctx)
	}
	return nil
}

// fragmentIDs hands out fragment ids from a job's id block and, once it is
// used up, from fresh ones: how many fragments a plan has is known only
// once it is cut (a view joining many tables, or reading shared subplans,
// has dozens).
type fragmentIDs struct {
	ctx context.Context
	e   *Engine
	ids *IDBlock
	err error
}

func (f *fragmentIDs) next() uint32 {
	if f.err == nil && f.ids.next >= f.ids.end {
		f.ids, f.err = f.e.IDs(f.ctx, 64)
	}
	if f.err != nil {
		return 0 // Fragmentize goes on; createJob reports f.err
	}
	return f.ids.Next()
}

// addGateTables gives the backfills of a view's or sink's job, and the
// merges not under one, a gate table: pausing the job then queues its
// input and lets barriers pass (stream/overtake). A gate never sits
// between a backfill and its upstream, which it must see as it changes.
// Table jobs have none: their sources pause themselves.
func addGateTables(job *plan.Job, nextID func() uint32) {
	gate := func() *plan.Table {
		t := overtake.Table()
		t.ID = nextID()
		return &t
	}
	var walk func(n *plan.Node, underBackfill bool)
	walk = func(n *plan.Node, underBackfill bool) {
		switch {
		case n.Backfill != nil && n.Backfill.GateTable == nil:
			n.Backfill.GateTable = gate()
		case n.Merge != nil && !underBackfill && n.Merge.GateTable == nil:
			n.Merge.GateTable = gate()
		}
		for _, in := range n.Inputs {
			walk(in, n.Kind == plan.KindBackfill)
		}
	}
	for _, f := range job.Fragments {
		walk(f.Root, false)
	}
}

// actorCount is how many actors job runs.
func actorCount(job *plan.Job) int {
	n := 0
	for _, f := range job.Fragments {
		n += f.Parallelism
	}
	return n
}

func assignActors(job *plan.Job, ids *IDBlock) map[uint32][]uint32 {
	out := map[uint32][]uint32{}
	for _, f := range job.Fragments {
		for range f.Parallelism {
			out[f.ID] = append(out[f.ID], ids.Next())
		}
	}
	return out
}

// upstream finds the materialize fragment of the relation whose state
// table is tableID.
func (e *Engine) upstream(tableID uint32) (plan.Upstream, error) {
	for _, r := range e.catalog.All() {
		if r.Table.ID == tableID && r.State != catalog.StateDropping && r.Job.Plan != nil {
			f := r.Job.Plan.Fragment(r.Job.MaterializeFragment)
			if f == nil {
				break
			}
			return plan.Upstream{Fragment: f.ID, Parallelism: f.Parallelism}, nil
		}
	}
	return plan.Upstream{}, sqlerr.Errorf(sqlerr.UndefinedTable, "upstream table %d does not exist", tableID)
}

// deploy prepares, starts and registers a recorded job.
func (e *Engine) deploy(ctx context.Context, rel *catalog.Relation) error {
	// A recovery may run at any moment and rebuild every job in the
	// catalog, this one included: then it is deployed and registered
	// already, which is as good.
	adds, started, err := e.prepareAndStart(ctx, rel)
	if err != nil || !started {
		return err
	}
	// Before the coordinator knows the job no barrier reaches it, so no
	// source or backfill has emitted a row yet: a rate limit given with
	// the CREATE holds from the first row.
	e.reapplyControl(rel)
	if _, err := e.coord.AddJob(ctx, jobSpec(rel), adds); err != nil && !errors.Is(err, barrier.ErrJobExists) {
		return fmt.Errorf("register job %s: %w", rel.Name, err)
	}
	// A DROP or CANCEL JOBS that ran between the start and the
	// registration told the coordinator before it knew the job, which
	// then registered actors already torn down: their epochs would never
	// complete. The drop marked the relation first, so it shows here.
	if cur, ok := e.catalog.ByID(rel.ID); !ok || cur.State == catalog.StateDropping {
		if err := e.coord.DropJobs(ctx, map[uint32][]stream.ActorID{rel.ID: actorsOf(rel)}); err != nil {
			return err
		}
		return errJobGone
	}
	return nil
}

// prepareAndStart deploys the job's actors under deployMu; started is
// false when a recovery deployed it first.
func (e *Engine) prepareAndStart(ctx context.Context, rel *catalog.Relation) (map[stream.ActorID][]stream.Dispatcher, bool, error) {
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	adds, err := e.node.Prepare(ctx, deployment(rel))
	if errors.Is(err, compute.ErrJobDeployed) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return adds, true, e.node.Start(ctx, rel.ID)
}

// abandon removes a job that failed before it was registered.
func (e *Engine) abandon(rel *catalog.Relation) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.deployMu.Lock()
	_ = e.node.DropJobs(ctx, []uint32{rel.ID})
	e.deployMu.Unlock()
	for _, a := range actorsOf(rel) {
		e.store.DiscardActor(storage.ActorID(a))
	}
	for _, t := range rel.Job.StateTables {
		_ = e.store.DropTableState(ctx, t)
	}
	_ = e.catalog.Delete(ctx, rel.ID)
}

// waitCreated waits for the job's backfill and one commit after it, then
// marks the relation created.
func (e *Engine) waitCreated(ctx context.Context, rel *catalog.Relation, foreground bool) error {
	ctx, done := e.creates.watch(ctx, rel.ID, foreground)
	defer done()
	if err := e.waitCaughtUpOne(ctx, rel); err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errJobGone) || errors.Is(cause, errReleased) {
			return cause
		}
		return err
	}
	return e.markCreated(ctx, rel)
}

// waitCaughtUpOne waits until rel's backfill is done and an epoch after
// that has committed whose barrier overtook no work of the job (a paused
// or throttled job's gates and joins, stream/overtake): the view then
// reflects the whole snapshot it backfilled. A job that never overtook
// takes one flush.
func (e *Engine) waitCaughtUpOne(ctx context.Context, rel *catalog.Relation) error {
	if err := e.waitBackfilled(ctx, rel); err != nil {
		return err
	}
	for {
		if err := e.flushOrCancelled(ctx); err != nil {
			return err
		}
		if e.jobBehindEpoch(rel.ID) < e.store.CommittedEpoch() {
			return nil
		}
	}
}

// jobBehindEpoch is the last epoch whose barrier overtook work of job's
// actors (0: none ever).
func (e *Engine) jobBehindEpoch(job uint32) uint64 {
	var last uint64
	for _, a := range e.node.ActorStats() {
		if a.Job == job {
			last = max(last, a.Stats.BehindEpoch())
		}
	}
	return last
}

// waitBackfilled waits until rel's job runs with its backfill done. Not
// running means a recovery is rebuilding it (wait) or a drop or cancel
// took it (errJobGone).
func (e *Engine) waitBackfilled(ctx context.Context, rel *catalog.Relation) error {
	for {
		_, done, running := e.node.JobProgress(rel.ID)
		if running && done {
			return nil
		}
		if cur, ok := e.catalog.ByID(rel.ID); !running && (!ok || cur.State == catalog.StateDropping) {
			return errJobGone
		}
		select {
		case <-ctx.Done():
			return cancelled(ctx)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// flushOrCancelled waits for an epoch that includes every write so far;
// a cancelled ctx is 57014.
func (e *Engine) flushOrCancelled(ctx context.Context) error {
	if err := e.Flush(ctx); err != nil {
		if ctx.Err() != nil {
			return cancelled(ctx)
		}
		return err
	}
	return nil
}

// errJobGone says a job was cancelled or dropped while it was created.
var errJobGone = errors.New("engine: job cancelled or dropped while being created")

// markCreated records that rel caught up, unless it was dropped or
// cancelled meanwhile: under deployMu, which drops hold while they mark
// their relations, so a cancelled job is never brought back.
func (e *Engine) markCreated(ctx context.Context, rel *catalog.Relation) error {
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	_, err := e.catalog.Update(ctx, rel.ID, func(cur *catalog.Relation) error {
		if cur.State != catalog.StateCreating {
			return errJobGone
		}
		// The current record, not rel: an ALTER may have changed it.
		cur.State = catalog.StateCreated
		return nil
	})
	if errors.Is(err, catalog.ErrNotFound) {
		return errJobGone
	}
	if err == nil {
		rel.State = catalog.StateCreated
	}
	return err
}

// finishInBackground marks a background-created job created once it has
// caught up; until then SHOW JOBS lists it and CANCEL JOBS may drop it.
// It runs in the engine's group, so Close stops it.
func (e *Engine) finishInBackground(rel *catalog.Relation) {
	e.group.Go(e.trunc.ctx, "create-"+rel.Name, func(ctx context.Context) error {
		if err := e.waitCreated(ctx, rel, false); err != nil && ctx.Err() == nil {
			e.log.Info("background create ended", "relation", rel.Name, "err", err)
		}
		return nil
	})
}

func cancelled(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout")
}

func deployment(rel *catalog.Relation) compute.Deployment {
	actors := map[uint32][]stream.ActorID{}
	for f, ids := range rel.Job.Actors {
		actors[f] = append([]stream.ActorID(nil), ids...)
	}
	return compute.Deployment{Job: rel.Job.Plan, Actors: actors}
}

func actorsOf(rel *catalog.Relation) []stream.ActorID {
	var out []stream.ActorID
	if rel.Job.Plan == nil {
		return nil // a source: no job
	}
	for _, f := range rel.Job.Plan.Fragments {
		out = append(out, rel.Job.Actors[f.ID]...)
	}
	return out
}

func jobSpec(rel *catalog.Relation) barrier.JobSpec {
	spec := barrier.JobSpec{ID: barrier.JobID(rel.ID)}
	for _, f := range rel.Job.Plan.Fragments {
		for _, a := range rel.Job.Actors[f.ID] {
			spec.Actors = append(spec.Actors, barrier.ActorID(a))
			if f.HasBarrierSource() {
				spec.Sources = append(spec.Sources, barrier.ActorID(a))
			}
		}
	}
	return spec
}

// hasRowID reports whether a table's key is its hidden row id (it has no
// declared primary key).
func hasRowID(rel *catalog.Relation) bool {
	return len(rel.Columns) > 0 && rel.Columns[len(rel.Columns)-1].Hidden
}
