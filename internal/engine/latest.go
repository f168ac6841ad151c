package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/types"
)

// A table's latest state is its committed state overlaid with its tail
// (storage/tail.go): every record of its DML log the committed epoch does
// not cover yet. Statements read tables at their latest state, so they see
// every write acknowledged before they started, at once, whatever the
// barriers are doing. The engine keeps the tails: Write applies each record
// as it enters the log, Open replays the log beyond the committed positions
// into them, and a pass after every commit prunes what the commit covered.

// tableLocks serializes the statements that read a table to write it
// (UPDATE, DELETE, INSERT into a table with a primary key), so that no two
// read the same version of a row and one of their writes is lost. A lock is
// held from the statement's read until its record is in the log and the
// tail, not through the sync: the next writer reads this one's write, and
// both share a sync.
type tableLocks struct {
	mu    sync.Mutex
	locks map[uint32]chan struct{} // a token in the channel = held
}

func (l *tableLocks) of(id uint32) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = make(map[uint32]chan struct{})
	}
	m := l.locks[id]
	if m == nil {
		m = make(chan struct{}, 1)
		l.locks[id] = m
	}
	return m
}

// TableWriter is a statement's hold on one table's write lock. Read the
// table's latest state through Snapshot, write through Write, and Close it
// (idempotent) when done; Write releases the lock as soon as its record is
// readable, before the sync.
type TableWriter struct {
	e      *Engine
	rel    *catalog.Relation
	mu     chan struct{}
	locked bool
	seq    uint64 // of the last record written, 0 = none
	// pending are the records Commit writes, in order: chunks prepared by
	// Stage and pieces of a bulk statement encoded by Prepare
	// (StagePrepared).
	pending []pendingWrite
	txn     *Txn // the block the statement is part of, if any
}

// pendingWrite is one record a Commit writes: a staged chunk, or a piece.
type pendingWrite struct {
	chunk *types.Chunk
	piece *Prepared
}

// Seq returns the log seq of the writer's last record (0 = none yet).
func (w *TableWriter) Seq() uint64 { return w.seq }

// RelationsOfTables maps state table ids (a plan's scan leaves) to the
// relations that own them.
func (e *Engine) RelationsOfTables(tables []uint32) []uint32 {
	var out []uint32
	for _, r := range e.catalog.All() {
		if slices.Contains(tables, r.Table.ID) {
			out = append(out, r.ID)
		}
	}
	return out
}

// LockTable takes the write lock of table rel. It waits for the writer
// before it, or for ctx.
func (e *Engine) LockTable(ctx context.Context, rel *catalog.Relation) (*TableWriter, error) {
	m := e.tableLocks.of(rel.Table.ID)
	select {
	case m <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &TableWriter{e: e, rel: rel, mu: m, locked: true}, nil
}

// Close releases the lock if Write has not.
func (w *TableWriter) Close() {
	if w.locked {
		w.locked = false
		<-w.mu
	}
}

// LatestRows reads tables' latest state by primary key without a
// snapshot (storage.Store.LatestGet), for a statement that holds the
// table's write lock and only checks keys.
type LatestRows struct{ store *storage.Store }

// LatestRows returns the engine's LatestRows.
func (e *Engine) LatestRows() LatestRows { return LatestRows{e.store} }

// Get reads the row of desc with primary key pk, if any.
func (r LatestRows) Get(ctx context.Context, desc storage.TableDesc, pk types.Row) (types.Row, bool, error) {
	return r.store.LatestGet(ctx, desc, pk)
}

// LatestSnapshot returns a snapshot holding every table's latest state
// (views as of the committed epoch). With durable, every write it holds is
// synced before it returns.
func (e *Engine) LatestSnapshot(ctx context.Context, durable bool) (*storage.Snapshot, error) {
	sn, err := e.store.LatestSnapshot(ctx, durable)
	if err != nil {
		return nil, err
	}
	if err := e.trimFresh(ctx, sn); err != nil {
		_ = sn.Close()
		return nil, err
	}
	return sn, nil
}

// trimFresh drops from sn the fresh rows its committed state already holds
// (a commit that the tails' prune has not caught up with): the table
// source's position in sn says which.
func (e *Engine) trimFresh(ctx context.Context, sn *storage.Snapshot) error {
	for _, id := range sn.FreshTables() {
		for _, r := range e.catalog.All() {
			if r.Table.ID != id {
				continue
			}
			off, ok := offsetTable(r)
			if !ok {
				continue
			}
			seq, rows, err := source.PositionIn(ctx, sn, off)
			if err != nil {
				return err
			}
			sn.TrimFresh(id, seq, rows)
		}
	}
	return nil
}

// replayTails rebuilds every table's tail from its log records beyond the
// committed position, on open: they are acknowledged writes the committed
// state does not hold yet.
func (e *Engine) replayTails(ctx context.Context) error {
	for _, r := range e.catalog.All() {
		off, ok := offsetTable(r)
		if !ok {
			continue
		}
		through, err := source.CommittedThrough(ctx, e.store, off)
		if err != nil {
			return err
		}
		if err := e.replayTail(r, through); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) replayTail(r *catalog.Relation, through uint64) error {
	desc := toDesc(r)
	for from := through + 1; ; {
		recs, err := e.store.ReadDML(desc.ID, from, 64)
		if err != nil || len(recs) == 0 {
			return err
		}
		for _, rec := range recs {
			from = rec.Seq + 1
			if rec.Load != nil {
				continue // a bulk load's file: the records after it hold its rows
			}
			c, err := source.DecodeDML(rec.Payload, desc.Types)
			if err != nil {
				return fmt.Errorf("table %s: dml record %d: %w", r.Name, rec.Seq, err)
			}
			fresh := freshRows(r, c)
			enc, err := encodedFresh(fresh, rec.Payload, desc.Types)
			if err != nil {
				return fmt.Errorf("table %s: dml record %d: %w", r.Name, rec.Seq, err)
			}
			if err := e.store.ApplyTailEncoded(desc, rec.Seq, c, fresh, enc); err != nil {
				return err
			}
		}
	}
}

// pruneTails forgets, for every table, the tail writes the latest commit
// covers. It runs after commits, in the background.
func (e *Engine) pruneTails(ctx context.Context) {
	for _, r := range e.catalog.All() {
		if ctx.Err() != nil {
			return
		}
		off, ok := offsetTable(r)
		if !ok || !e.store.TailPending(r.Table.ID) {
			continue
		}
		through, err := source.CommittedThrough(ctx, e.store, off)
		if err != nil {
			e.log.Warn("prune table tail", "table", r.Name, "err", err)
			continue
		}
		e.store.PruneTail(r.Table.ID, through)
	}
}

// Written is the log position of a session's writes: per table (relation
// id), the seq of its last record. A view includes them once a committed epoch covers
// every one.
type Written map[uint32]uint64

// Note records the seq of a write to table id.
func (w Written) Note(id uint32, seq uint64) { w[id] = max(w[id], seq) }

// WaitCovered waits until the committed epoch has applied every write in w
// to the tables that the relations rels (ids) depend on (their views then
// include them), asking for a barrier at once instead of waiting for the
// next tick, and drops the covered entries from w. A running table source
// emits every record durable when a barrier reaches it before passing it,
// so the barrier asked for covers the writes; a paused or rate-limited one
// lets it pass first, and then the writes stay uncovered: WaitCovered does
// not wait for a job the user holds back, and returns the tables still
// behind in lagging. epoch is the one it waited for, 0 when nothing was
// pending.
func (e *Engine) WaitCovered(ctx context.Context, w Written, rels []uint32) (epoch uint64, lagging []string, err error) {
	need := e.pendingFor(w, rels)
	if len(need) == 0 {
		return 0, nil, nil
	}
	if e.covered(ctx, w, need); len(need) == 0 {
		return 0, nil, ctx.Err()
	}
	if epoch, err = e.coord.RequestBarrier(ctx, "read-your-writes"); err != nil {
		return 0, nil, err
	}
	if err := e.store.WaitCommitted(ctx, epoch); err != nil {
		return epoch, nil, err
	}
	e.covered(ctx, w, need)
	for id := range need {
		if r, ok := e.catalog.ByID(id); ok {
			lagging = append(lagging, r.Name)
		}
	}
	slices.Sort(lagging)
	return epoch, lagging, ctx.Err()
}

// covered removes from need (and from w) the tables whose committed
// position has reached the seq in need.
func (e *Engine) covered(ctx context.Context, w Written, need map[uint32]uint64) {
	for id, seq := range need {
		r, ok := e.catalog.ByID(id)
		off, hasOff := offsetTable(r)
		if !ok || !hasOff {
			delete(need, id) // dropped meanwhile: nothing to wait for
			delete(w, id)
			continue
		}
		through, err := source.CommittedThrough(ctx, e.store, off)
		if err != nil {
			continue // stays pending; the caller reports it as lagging
		}
		if through >= seq {
			delete(need, id)
			if w[id] == seq {
				delete(w, id)
			}
		}
	}
}

// pendingFor returns the entries of w for the tables that rels read,
// directly or through views.
func (e *Engine) pendingFor(w Written, rels []uint32) map[uint32]uint64 {
	need := map[uint32]uint64{}
	if len(w) == 0 {
		return need
	}
	seen := map[uint32]bool{}
	var visit func(id uint32)
	visit = func(id uint32) {
		if seen[id] {
			return
		}
		seen[id] = true
		if seq, ok := w[id]; ok {
			need[id] = seq
		}
		if r, ok := e.catalog.ByID(id); ok {
			for _, d := range r.DependsOn {
				visit(d)
			}
		}
	}
	for _, id := range rels {
		visit(id)
	}
	return need
}
