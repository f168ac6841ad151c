package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// Every DML statement holds its target table's write lock from its read
// of the table's latest state until its one log record is written (see
// engine.TableWriter): its changes are computed from the current rows, and
// no concurrent statement can change them in between. A statement is one
// record, however many rows it writes, so it is applied entirely or not
// at all, across a crash too.

// insert writes the new rows (constant VALUES or a query's result),
// checking them against the table's primary key (conflict.go).
func (s *Session) insert(ctx context.Context, ins *planner.Insert, w pgwire.ResultWriter) error {
	tw, rd, done, err := s.lockForInsert(ctx, ins)
	if err != nil {
		return err
	}
	if ins.Query != nil && (ins.OnConflict == nil || skipsInPieces(ins) || updatesInPieces(ins)) {
		return s.insertQuery(ctx, tw, rd.(*storage.Snapshot), ins, w, done)
	}
	defer done()
	rows := ins.Rows
	if ins.Query != nil {
		if rows, err = s.collectOn(ctx, rd.(*storage.Snapshot), ins.Query); err != nil {
			return err
		}
	}
	c, n, err := s.insertChanges(ctx, rd, ins, rows)
	if err != nil {
		return err
	}
	ret, err := s.evalReturning(ins.Returning, writtenRows(c))
	if err != nil {
		return err
	}
	if err := s.writeChunk(ctx, tw, c); err != nil {
		return err
	}
	if err := s.maybeImplicitFlush(ctx, w); err != nil {
		return err
	}
	if err := sendReturning(ctx, ins.Returning, ret, w); err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("INSERT 0 %d", n))
}

// insertQuery writes an INSERT … SELECT in pieces (insertQueryPieces),
// its RETURNING rows spooled until it is written. done releases the
// table's lock and sn: once the pieces are written, before the rows are
// sent (a client fetching them slowly holds no writer up).
func (s *Session) insertQuery(ctx context.Context, tw *engine.TableWriter, sn *storage.Snapshot, ins *planner.Insert, w pgwire.ResultWriter,
	done func()) error {
	var once sync.Once
	release := func() { once.Do(done) }
	defer release()
	var ret *returningRows
	if ins.Returning != nil {
		var err error
		if ret, err = s.newReturningRows(ins.Returning); err != nil {
			return err
		}
		defer ret.close()
	}
	n, err := s.insertQueryPieces(ctx, tw, sn, ins, ret)
	return s.completeChange(ctx, w, "INSERT 0", n, ret, release, err)
}

// delete writes a Delete of every matching row (all columns, so the
// hidden row id names the row), in pieces (deleteInPieces).
func (s *Session) delete(ctx context.Context, d *planner.Delete, w pgwire.ResultWriter) error {
	tw, sn, done, err := s.lockAndRead(ctx, d.Table)
	if err != nil {
		return err
	}
	release := sync.OnceFunc(done)
	defer release()
	ret, err := s.changeReturning(d.Returning, true)
	if err != nil {
		return err
	}
	defer ret.close()
	n, err := s.deleteInPieces(ctx, tw, sn, d, ret)
	return s.completeChange(ctx, w, "DELETE", n, ret, release, err)
}

// update writes each change as an UpdateDelete of the old row followed by
// an UpdateInsert of the new one, so views see one update per row.
func (s *Session) update(ctx context.Context, u *planner.Update, w pgwire.ResultWriter) error {
	tw, sn, done, err := s.lockAndRead(ctx, u.Table)
	if err != nil {
		return err
	}
	release := sync.OnceFunc(done)
	defer release()
	ret, err := s.changeReturning(u.Returning, false)
	if err != nil {
		return err
	}
	defer ret.close()
	n, err := s.updateInPieces(ctx, tw, sn, u, ret)
	if errors.Is(err, errMovesKeys) {
		// Again from the start, its RETURNING rows too (the first
		// spool is closed by the defer above).
		if ret, err = s.changeReturning(u.Returning, false); err != nil {
			return err
		}
		defer ret.close()
		n, err = s.updateMovingKeysInPieces(ctx, tw, sn, u, ret)
	}
	return s.completeChange(ctx, w, "UPDATE", n, ret, release, err)
}

// maybeImplicitFlush waits, under implicit_flush, for an epoch that covers
// the statement's write. The write is durable already, so a wait that ends
// early (statement_timeout, a cancel, a stuck barrier) must not report it
// as failed: the statement succeeds with a WARNING saying the views may not
// include it yet.
func (s *Session) maybeImplicitFlush(ctx context.Context, w pgwire.ResultWriter) error {
	if !s.vars.bool("implicit_flush") || s.tx != nil {
		return nil // a block flushes at COMMIT
	}
	err := s.e.Flush(ctx)
	if err == nil {
		return nil
	}
	why := err.Error()
	if ctx.Err() != nil {
		why = "the statement was cancelled or timed out while waiting"
		if cause, ok := sqlerr.As(context.Cause(ctx)); ok {
			why = cause.Message
		}
	}
	return w.Notice(pgwire.Notice{Severity: "WARNING", Message: "the write is durable, but implicit_flush stopped waiting for the views to include it: " + why})
}

func visibleTypes(rel *catalog.Relation) []types.Type {
	var ts []types.Type
	for _, c := range rel.Columns {
		if !c.Hidden {
			ts = append(ts, c.Type)
		}
	}
	return ts
}

// writeChunk writes c, if it has rows (an empty statement writes nothing);
// inside a transaction block it stages c for COMMIT.
func (s *Session) writeChunk(ctx context.Context, tw *engine.TableWriter, c *types.Chunk) error {
	if c == nil || c.Cardinality() == 0 {
		return nil
	}
	if s.tx != nil {
		_, err := tw.Stage(ctx, c)
		return err
	}
	return tw.Write(ctx, c)
}

// retryLocked runs a DML statement; if it would change a row an open
// transaction block holds, it waits (holding nothing) for the block to
// end and runs the statement again, as Postgres waits for a row lock.
// statement_timeout and a cancel end the wait.
func (s *Session) retryLocked(ctx context.Context, run func() error) error {
	for {
		err := run()
		var locked *engine.KeyLockedError
		if s.tx != nil || !errors.As(err, &locked) {
			return err
		}
		if err := locked.Wait(ctx); err != nil {
			return err
		}
	}
}

// lockForInsert takes the write lock of ins's table and returns what the
// INSERT reads through: a snapshot of the latest state when it runs a
// query or is inside a transaction block (whose own writes the snapshot
// carries), else the latest state read key by key, which takes no
// snapshot (engine.LatestRows).
func (s *Session) lockForInsert(ctx context.Context, ins *planner.Insert) (*engine.TableWriter, keyReader, func(), error) {
	if ins.Query != nil || s.tx != nil {
		return s.lockAndRead(ctx, ins.Table)
	}
	tw, done, err := s.lockTable(ctx, ins.Table)
	if err != nil {
		return nil, nil, nil, err
	}
	return tw, s.e.LatestRows(), done, nil
}

// lockAndRead takes rel's write lock and then a snapshot of the latest
// state (with the open block's writes); done closes both.
func (s *Session) lockAndRead(ctx context.Context, rel *catalog.Relation) (*engine.TableWriter, *storage.Snapshot, func(), error) {
	tw, unlock, err := s.lockTable(ctx, rel)
	if err != nil {
		return nil, nil, nil, err
	}
	sn, err := s.latest(ctx)
	if err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return tw, sn, func() { _ = sn.Close(); unlock() }, nil
}

// lockTable takes rel's write lock for a statement; the session notes
// where the statement's write went when it is released (done).
func (s *Session) lockTable(ctx context.Context, rel *catalog.Relation) (*engine.TableWriter, func(), error) {
	if s.tx != nil {
		tw, err := s.tx.t.Writer(ctx, rel)
		if err != nil {
			return nil, nil, err
		}
		return tw, tw.Close, nil // the block holds the rows it changed
	}
	tw, err := s.e.LockTable(ctx, rel)
	if err != nil {
		return nil, nil, err
	}
	return tw, func() {
		tw.Close()
		if seq := tw.Seq(); seq > 0 {
			s.written.Note(rel.ID, seq)
		}
	}, nil
}
