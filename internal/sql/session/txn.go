package session

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
)

// A transaction block (BEGIN … COMMIT) collects its writes instead of
// writing them: each DML statement computes its changes against the
// tables' latest state overlaid with the block's own earlier writes (so
// the block reads its own writes, READ COMMITTED otherwise, as Postgres's
// default), and stages them on the table's writer. COMMIT writes every
// staged change of every table in one synced batch, so a crash keeps all
// of them or none; ROLLBACK, a failed COMMIT and a closed connection
// discard them.
//
// The block holds the write lock of every table it writes until it ends,
// so no other statement can change what it read. It waits for the first
// table's lock like any statement; a lock it needs after that, if another
// writer holds it, fails the statement with 40001 instead of waiting: a
// block that waits holds no lock, so no two can wait for each other.
//
// After an error the block is failed (Postgres's 25P02): every statement
// but COMMIT and ROLLBACK is refused, and COMMIT rolls back.
type txn struct {
	writers map[uint32]*engine.TableWriter // by relation id, in lock order
	order   []*engine.TableWriter
	failed  bool
}

// beginBlock starts a transaction block.
func (s *Session) beginBlock() { s.tx = &txn{writers: map[uint32]*engine.TableWriter{}} }

// txWriter returns the block's writer of rel, taking rel's lock.
func (s *Session) txWriter(ctx context.Context, rel *catalog.Relation) (*engine.TableWriter, error) {
	if w := s.tx.writers[rel.ID]; w != nil {
		return w, nil
	}
	var w *engine.TableWriter
	if len(s.tx.order) == 0 {
		var err error
		if w, err = s.e.LockTable(ctx, rel); err != nil {
			return nil, err
		}
	} else {
		var ok bool
		if w, ok = s.e.TryLockTable(rel); !ok {
			return nil, sqlerr.Errorf(sqlerr.Code("40001"),
				"could not serialize access: table %q is being written by another transaction or statement", rel.Name)
		}
	}
	s.tx.writers[rel.ID] = w
	s.tx.order = append(s.tx.order, w)
	return w, nil
}

// overlayOwnWrites makes the block's staged writes visible in sn.
func (s *Session) overlayOwnWrites(sn *storage.Snapshot) error {
	if s.tx == nil {
		return nil
	}
	for _, w := range s.tx.order {
		desc := storage.TableDesc(w.Relation().Table)
		for _, c := range w.Staged() {
			if err := sn.ApplyWrites(desc, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// commitBlock writes the block's changes atomically and ends it.
func (s *Session) commitBlock(ctx context.Context, w pgwire.ResultWriter) error {
	tx := s.tx
	s.tx = nil
	if tx.failed {
		tx.release()
		return w.Complete("ROLLBACK")
	}
	err := s.e.Commit(ctx, tx.order...)
	tx.release()
	if err != nil {
		return err
	}
	for _, tw := range tx.order {
		if seq := tw.Seq(); seq > 0 {
			s.written.Note(tw.Relation().ID, seq)
		}
	}
	if len(tx.order) > 0 {
		if err := s.maybeImplicitFlush(ctx, w); err != nil {
			return err
		}
	}
	return w.Complete("COMMIT")
}

// rollbackBlock discards the block's changes and ends it.
func (s *Session) rollbackBlock() {
	if s.tx != nil {
		s.tx.release()
		s.tx = nil
	}
}

func (tx *txn) release() {
	for _, w := range tx.order {
		w.Discard()
		w.Close()
	}
}

// refuseInFailedBlock returns 25P02 for a statement in a failed block,
// unless it ends the block.
func (s *Session) refuseInFailedBlock(st *parser.Statement) error {
	if s.tx == nil || !s.tx.failed {
		return nil
	}
	if st.Kind == parser.KindStandard {
		if t, ok := st.Node.Node.(*pg_query.Node_TransactionStmt); ok {
			switch t.TransactionStmt.Kind {
			case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT, pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
				return nil
			}
		}
	}
	return sqlerr.New(sqlerr.Code("25P02"), "current transaction is aborted, commands ignored until end of transaction block")
}

// failBlock marks the block failed after a statement's error.
func (s *Session) failBlock() {
	if s.tx != nil {
		s.tx.failed = true
	}
}
