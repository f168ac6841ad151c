package session

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

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
// default), and stages them in the block (engine.Txn). COMMIT writes every
// staged change of every table in one synced batch, so a crash keeps all
// of them or none, and the views see all of it in one epoch; ROLLBACK, a
// failed COMMIT and a closed connection discard them.
//
// Each statement holds its table's lock only while it runs, as a single
// statement does; the block holds the rows it changed until it ends. A
// row another open block holds fails the statement with 40001 instead of
// waiting, so no two blocks wait for each other; a single statement
// waits for the block, then runs again (dml.go).
//
// After an error the block is failed (Postgres's 25P02): every statement
// but COMMIT and ROLLBACK is refused, and COMMIT rolls back.
type txn struct {
	t      *engine.Txn
	failed bool
}

// beginBlock starts a transaction block.
func (s *Session) beginBlock() { s.tx = &txn{t: s.e.Begin()} }

// overlayOwnWrites makes the block's staged writes visible in sn.
func (s *Session) overlayOwnWrites(sn *storage.Snapshot) error {
	if s.tx == nil {
		return nil
	}
	return s.tx.t.Overlay(sn)
}

// commitBlock writes the block's changes atomically and ends it.
func (s *Session) commitBlock(ctx context.Context, w pgwire.ResultWriter) error {
	tx := s.tx
	s.tx = nil
	if tx.failed {
		tx.t.Rollback()
		return w.Complete("ROLLBACK")
	}
	wrote := tx.t.Written()
	seqs, err := tx.t.Commit(ctx)
	if err != nil {
		return err
	}
	for id, seq := range seqs {
		if seq > 0 {
			s.written.Note(id, seq)
		}
	}
	if wrote {
		if err := s.maybeImplicitFlush(ctx, w); err != nil {
			return err
		}
	}
	return w.Complete("COMMIT")
}

// rollbackBlock discards the block's changes and ends it.
func (s *Session) rollbackBlock() {
	if s.tx != nil {
		s.tx.t.Rollback()
		s.tx = nil
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
