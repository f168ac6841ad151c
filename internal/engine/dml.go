package engine

import (
	"context"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/types"
)

// Write appends a chunk of changes to a table's durable DML log and
// returns once it is synced: from then on the write survives a crash. The
// chunk has the table's visible columns; hidden row ids of inserts into a
// table without a primary key are assigned here. Deletes must carry the
// full row including the hidden row id (as read from the table). The
// record is in the table's latest state (LatestSnapshot) before Write
// returns. Into a table with a primary key the changes are upserts: an
// insert over a held key replaces its row, a delete of an absent key does
// nothing (upsert.go). A statement that read the table to compute c
// writes through its TableWriter instead.
func (e *Engine) Write(ctx context.Context, table string, c *types.Chunk) error {
	rel, ok := e.catalog.ByName(table)
	if !ok {
		return sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", table)
	}
	if rel.Kind == catalog.KindTable && !hasRowID(rel) {
		return e.writeUpserts(ctx, rel, c)
	}
	if rel.Kind == catalog.KindTable && hasRetraction(c) {
		return e.writeRowIDChanges(ctx, rel, c)
	}
	_, err := e.write(ctx, rel, c, nil)
	return err
}

// Write appends c to the locked table's log (as Engine.Write) and releases
// the lock once the record is readable, before it is synced.
func (w *TableWriter) Write(ctx context.Context, c *types.Chunk) error {
	if _, err := w.Stage(ctx, c); err != nil {
		return err
	}
	return w.e.Commit(ctx, w)
}

// Stage checks c and prepares it as it will be written (type modifiers
// applied, hidden row ids assigned) without writing it: Commit writes every
// staged chunk. It returns the prepared chunk, with every column, so that a
// transaction can read its own writes (storage.Snapshot.Overlay). The
// rows it changes must not be held by an open transaction block (txn.go);
// a block's writer keeps the chunk in the block and holds its rows.
func (w *TableWriter) Stage(ctx context.Context, c *types.Chunk) (*types.Chunk, error) {
	full, err := w.e.prepare(ctx, w.rel, c)
	if err != nil {
		return nil, err
	}
	if err := w.e.lockKeys(w.txn, w.rel, full); err != nil {
		return nil, err
	}
	if w.txn != nil {
		return full, w.txn.stage(w.rel, full)
	}
	w.pending = append(w.pending, pendingWrite{chunk: full})
	return full, nil
}

// Discard forgets the staged chunks (ROLLBACK).
func (w *TableWriter) Discard() { w.pending = nil }

// Commit writes the chunks staged in every writer, one record each, in one
// synced batch: a crash keeps all of them or none. The writers' locks are
// released once the records are readable, before the sync.
func (e *Engine) Commit(ctx context.Context, ws ...*TableWriter) error {
	var batch []storage.TableDMLWrite
	var owner []*TableWriter
	for _, w := range ws {
		if tid, ok := e.catalog.StateTableOf(w.rel.ID); !ok || tid != w.rel.Table.ID {
			return sqlerr.Errorf(sqlerr.UndefinedTable, "table %q was dropped before the transaction committed", w.rel.Name)
		}
		desc := toDesc(w.rel)
		for _, pw := range w.pending {
			dw, err := pw.record(w.rel, &desc)
			if err != nil {
				return err
			}
			batch = append(batch, storage.TableDMLWrite{Table: desc.ID, DMLWrite: dw})
			owner = append(owner, w)
		}
	}
	for _, w := range ws {
		for _, pw := range w.pending {
			if pw.piece != nil {
				pw.piece.handedOff = true // WriteDMLBatch owns the segments from here
			}
		}
	}
	release := func() {
		for _, w := range ws {
			w.Close()
		}
	}
	if len(batch) == 0 {
		release()
		return nil
	}
	seqs, err := e.store.WriteDMLBatch(ctx, batch, release)
	if err != nil {
		return err
	}
	for i, w := range owner {
		w.seq, w.pending = seqs[i], nil
	}
	return nil
}

// prepare checks a chunk written to rel and returns it with every column.
func (e *Engine) prepare(ctx context.Context, rel *catalog.Relation, c *types.Chunk) (*types.Chunk, error) {
	if rel.Kind != catalog.KindTable {
		return nil, sqlerr.Errorf(sqlerr.WrongObjectType, "cannot change materialized view %q", rel.Name)
	}
	if rel.AppendOnly && hasRetraction(c) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "append-only table does not support update or delete")
	}
	if err := applyModifiers(rel, c); err != nil {
		return nil, err
	}
	if err := checkNotNull(rel, c); err != nil {
		return nil, err
	}
	return e.withRowIDs(ctx, rel, c.Compact())
}

func (e *Engine) write(ctx context.Context, rel *catalog.Relation, c *types.Chunk, enqueued func()) (uint64, error) {
	full, err := e.prepare(ctx, rel, c)
	if err != nil {
		return 0, err
	}
	payload, err := encodeDML(rel, full)
	if err != nil {
		return 0, err
	}
	desc := toDesc(rel)
	w := storage.DMLWrite{Payload: payload, Tail: &desc, Rows: full, Fresh: freshRows(rel, full), Enqueued: enqueued}
	if w.Encoded, err = encodedFresh(w.Fresh, payload, desc.Types); err != nil {
		return 0, err
	}
	return e.store.WriteDML(ctx, rel.Table.ID, w)
}

// encodeDML encodes c as rel's log record; a run of new hidden row ids is
// marked as such, and reaches the table's state without being decoded
// (stream.FreshRows).
func encodeDML(rel *catalog.Relation, c *types.Chunk) ([]byte, error) {
	return appendDML(nil, rel, c)
}

// appendDML is encodeDML into dst's storage.
func appendDML(dst []byte, rel *catalog.Relation, c *types.Chunk) ([]byte, error) {
	idCol := -1
	if hasRowID(rel) {
		idCol = len(rel.Columns) - 1
	}
	return source.AppendTableDML(dst, c, idCol)
}

// encodedFresh locates a fresh record's rows in its payload, so that the
// table's tail keeps them there rather than as decoded columns (twice the
// memory, for a bulk COPY until its epoch commits). Small records keep
// their chunk: locating the rows would cost more than it saves.
func encodedFresh(fresh bool, payload []byte, ts []types.Type) (*storage.EncodedRows, error) {
	if !fresh || len(payload) < encodedFreshFrom {
		return nil, nil
	}
	spans, err := source.RowSpans(payload, ts)
	if err != nil || spans == nil {
		return nil, err
	}
	return &storage.EncodedRows{Buf: payload, Spans: spans}, nil
}

// encodedFreshFrom is the payload size from which encodedFresh applies,
// and from which Prepare writes a piece to its own segment (a variable so
// that the crash test can make bulk pieces small).
var encodedFreshFrom = 64 << 10

// Conform applies rel's type modifiers to c in place and refuses a NULL
// in a NOT NULL column, as writing it will: a statement that checks its
// keys before it writes checks them as they will be stored (numeric(4, 1)
// stores 1.01 and 1.04 under one key).
func Conform(rel *catalog.Relation, c *types.Chunk) error {
	if err := applyModifiers(rel, c); err != nil {
		return err
	}
	return checkNotNull(rel, c)
}

// applyModifiers enforces the columns' type modifiers on the rows
// written (numeric(p, s) rounds, or refuses an overflow; varchar(n)
// refuses a longer value), in place: the chunk is this write's own.
func applyModifiers(rel *catalog.Relation, c *types.Chunk) error {
	for j, col := range rel.Columns {
		if col.Mod == nil || j >= len(c.Cols) {
			continue
		}
		for i := 0; i < c.Capacity(); i++ {
			if !c.Visible(i) || c.Cols[j].IsNull(i) {
				continue
			}
			d, err := col.Mod.Apply(c.Cols[j].Get(i), col.Type, false)
			if err != nil {
				return err
			}
			c.Cols[j].Set(i, d)
		}
	}
	return nil
}

// checkNotNull refuses a chunk that writes NULL to a NOT NULL column (a
// primary key column included), before anything is logged.
func checkNotNull(rel *catalog.Relation, c *types.Chunk) error {
	for j, col := range rel.Columns {
		if !col.NotNull || j >= len(c.Cols) {
			continue
		}
		for i := 0; i < c.Capacity(); i++ {
			if c.Visible(i) && c.Op(i).IsInsert() && c.Cols[j].IsNull(i) {
				return sqlerr.Errorf(sqlerr.Code("23502"), "null value in column %q of relation %q violates not-null constraint", col.Name, rel.Name)
			}
		}
	}
	return nil
}

// freshRows reports whether c's rows are all plain inserts into a table
// keyed by its hidden row id: their ids are fresh (withRowIDs hands each out
// once and refuses a plain insert that names one).
func freshRows(rel *catalog.Relation, c *types.Chunk) bool {
	if !hasRowID(rel) {
		return false
	}
	for i := 0; i < c.Capacity(); i++ {
		if c.Visible(i) && c.Op(i) != types.Insert {
			return false
		}
	}
	return true
}

func hasPlainInsert(c *types.Chunk) bool {
	for i := 0; i < c.Capacity(); i++ {
		if c.Visible(i) && c.Op(i) == types.Insert {
			return true
		}
	}
	return false
}

func hasRetraction(c *types.Chunk) bool {
	for i := 0; i < c.Capacity(); i++ {
		if c.Visible(i) && !c.Op(i).IsInsert() {
			return true
		}
	}
	return false
}

// withRowIDs appends the hidden row id column when the chunk lacks it.
func (e *Engine) withRowIDs(ctx context.Context, rel *catalog.Relation, c *types.Chunk) (*types.Chunk, error) {
	if len(c.Cols) == len(rel.Columns) {
		if hasRowID(rel) && hasPlainInsert(c) {
			// Plain inserts get fresh ids, so the table's materialize
			// stores them without a lookup (plan.Materialize.FreshInserts).
			return nil, sqlerr.Errorf(sqlerr.Internal, "insert into %s with an explicit row id", rel.Name)
		}
		return c, nil
	}
	if len(c.Cols) != len(rel.Columns)-1 || !rel.Columns[len(rel.Columns)-1].Hidden {
		return nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "%d columns written to %s, which has %d", len(c.Cols), rel.Name, len(rel.Columns))
	}
	if hasRetraction(c) {
		return nil, sqlerr.Errorf(sqlerr.Internal, "delete from %s without its row id", rel.Name)
	}
	n := c.Capacity()
	first, err := e.rowIDs.take(ctx, rel.ID, n)
	if err != nil {
		return nil, err
	}
	ids := &types.Vec[int64]{Typ: types.TInt64, Vals: make([]int64, n)}
	for i := range ids.Vals {
		ids.Vals[i] = first + int64(i)
	}
	return c.WithColumns(append(append([]types.Column(nil), c.Cols...), ids)), nil
}

// Scan reads a relation's rows (all columns, hidden included) from the
// latest committed snapshot.
func (e *Engine) Scan(ctx context.Context, name string) ([]types.Row, error) {
	rel, ok := e.catalog.ByName(name)
	if !ok {
		return nil, sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	sn, err := e.store.Snapshot()
	if err != nil {
		return nil, err
	}
	defer sn.Close()
	it, err := sn.ScanTable(ctx, toDesc(rel))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var rows []types.Row
	for {
		r, ok, err := it.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return rows, nil
		}
		rows = append(rows, r)
	}
}

func sleepCtx(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * time.Millisecond):
		return nil
	}
}

// record returns the log record of a pending write to rel.
func (pw pendingWrite) record(rel *catalog.Relation, desc *storage.TableDesc) (storage.DMLWrite, error) {
	if pw.piece != nil {
		if pw.piece.released {
			return storage.DMLWrite{}, sqlerr.Errorf(sqlerr.Internal, "engine: a released piece of %s written", rel.Name)
		}
		dw := pw.piece.write
		if !pw.piece.isLoad() {
			dw.Tail = desc
		}
		return dw, nil
	}
	c := pw.chunk
	payload, err := encodeDML(rel, c)
	if err != nil {
		return storage.DMLWrite{}, err
	}
	dw := storage.DMLWrite{Payload: payload, Tail: desc, Rows: c, Fresh: freshRows(rel, c)}
	dw.Encoded, err = encodedFresh(dw.Fresh, payload, desc.Types)
	return dw, err
}
