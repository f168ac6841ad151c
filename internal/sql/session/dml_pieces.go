package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// An UPDATE or DELETE collected every row it changed, old and new, boxed,
// and wrote them as one chunk: a two-million-row UPDATE peaked at 980 MB
// before its epoch began. Such a statement writes its changes in pieces,
// as INSERT … SELECT does (insertQueryPieces): one synced batch at the
// end, all of it or none, never held whole (a transaction block keeps the
// pieces in their segments, and reads them back as runs, until COMMIT);
// its RETURNING rows are computed piece by piece and spooled until it is
// written (returningRows). An UPDATE that changes a row's key writes
// every delete before any insert (update_moving.go): when a piece meets
// one, the pieces are dropped and the statement runs again that way.

// errMovesKeys stops an UPDATE in pieces that changes a key.
var errMovesKeys = errors.New("session: the update changes a key")

// changePieces writes a statement's changes in pieces under tw's lock.
type changePieces struct {
	s  *Session
	tw *engine.TableWriter
	l  *pieceLoader
	// locked is the first piece's KeyLockedError: the statement waits for
	// the block holding the key and runs again, once every piece is read.
	locked error
	rows   int
}

func (s *Session) newChangePieces(tw *engine.TableWriter, rel *catalog.Relation, ret *returningRows) *changePieces {
	p := &changePieces{s: s, tw: tw}
	p.l = s.newPieceLoader(rel, rel.Table.Types, p.check)
	p.l.keys, p.l.sortBy = nil, -1 // an update pair names its key twice
	p.l.b = types.NewBuilder(rel.Table.Types, max(copyPieceRows, 2))
	p.l.returning = ret
	return p
}

// check fails a piece holding a row an open block holds (later: the
// statement waits for the block once all pieces are read).
func (p *changePieces) check(c *types.Chunk) error {
	err := p.tw.CheckKeyLocks(c)
	if errors.As(err, new(*engine.KeyLockedError)) {
		p.locked = cmp.Or(p.locked, err)
		return nil
	}
	return err
}

// add adds one change (old alone for a delete) and prepares the piece it
// fills; a pair is never cut between two pieces.
func (p *changePieces) add(ctx context.Context, old, new types.Row) error {
	p.rows++
	if new == nil {
		if c := p.l.b.Append(types.Delete, old); c != nil {
			return p.l.prepare(ctx, c)
		}
		return nil
	}
	if p.l.b.Len()+2 > max(copyPieceRows, 2) {
		if err := p.l.prepare(ctx, p.l.b.Take()); err != nil {
			return err
		}
	}
	p.l.b.Append(types.UpdateDelete, old)
	if c := p.l.b.Append(types.UpdateInsert, new); c != nil {
		return p.l.prepare(ctx, c)
	}
	return nil
}

// commit prepares the last piece and writes them all.
func (p *changePieces) commit(ctx context.Context) error {
	if err := p.l.finish(ctx); err != nil {
		return err
	}
	if p.locked != nil {
		return p.locked
	}
	if err := p.l.returningErr(); err != nil {
		return err
	}
	if len(p.l.pieces) == 0 {
		return nil
	}
	return p.s.commitPieces(ctx, p.tw, p.l.pieces)
}

// updateInPieces runs an UPDATE over sn and writes its changes in pieces;
// it returns errMovesKeys, having written nothing, when a row's key
// changes. ret, when set, takes the RETURNING rows.
func (s *Session) updateInPieces(ctx context.Context, tw *engine.TableWriter, sn *storage.Snapshot, u *planner.Update,
	ret *returningRows) (n int, err error) {
	p := s.newChangePieces(tw, u.Table, ret)
	defer func() {
		if err != nil {
			p.l.release()
		}
	}()
	cols := len(u.Table.Columns)
	pk := u.Table.PK
	err = s.runBatchOn(ctx, sn, u.Query, func(r types.Row) error {
		old, new := r[:cols:cols], r[cols:2*cols:2*cols]
		for _, c := range pk {
			if types.Compare(old[c], new[c]) != 0 {
				return errMovesKeys
			}
		}
		return p.add(ctx, old, new)
	})
	if err != nil {
		return 0, err
	}
	return p.rows, p.commit(ctx)
}

// deleteInPieces runs a DELETE over sn and writes its deletes in pieces.
func (s *Session) deleteInPieces(ctx context.Context, tw *engine.TableWriter, sn *storage.Snapshot, d *planner.Delete,
	ret *returningRows) (n int, err error) {
	p := s.newChangePieces(tw, d.Table, ret)
	defer func() {
		if err != nil {
			p.l.release()
		}
	}()
	err = s.runBatchOn(ctx, sn, d.Query, func(r types.Row) error { return p.add(ctx, r, nil) })
	if err != nil {
		return 0, err
	}
	return p.rows, p.commit(ctx)
}

// changeReturning returns what keeps an UPDATE's or DELETE's (deleted)
// RETURNING rows, nil without RETURNING.
func (s *Session) changeReturning(r *planner.Returning, deleted bool) (*returningRows, error) {
	if r == nil {
		return nil, nil
	}
	ret, err := s.newReturningRows(r)
	if err != nil {
		return nil, err
	}
	ret.deleted = deleted
	return ret, nil
}

// completeChange ends a statement written in pieces (an UPDATE, a DELETE,
// an INSERT … SELECT): n rows, or err. release lets the table's lock go before the RETURNING rows in ret,
// if any, are sent (a client fetching them slowly holds no writer up).
func (s *Session) completeChange(ctx context.Context, w pgwire.ResultWriter, tag string, n int, ret *returningRows,
	release func(), err error) error {
	if err != nil {
		return err
	}
	release()
	if err := s.maybeImplicitFlush(ctx, w); err != nil {
		return err
	}
	if ret != nil {
		if err := ret.send(ctx, w); err != nil {
			return err
		}
	}
	return w.Complete(fmt.Sprintf("%s %d", tag, n))
}
