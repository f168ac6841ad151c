package session

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// pieceLoader cuts a bulk statement's rows (a COPY's, an INSERT … SELECT's)
// into pieces of copyPieceRows, checks a keyed statement's keys against
// each other (statementKeys), and prepares each piece as it fills
// (engine.Prepare: a large piece goes to a log segment of its own and is
// let go), so the statement is never held whole; its caller writes the
// pieces together at the end, one synced batch.
type pieceLoader struct {
	s   *Session
	rel *catalog.Relation
	// b is filled by the caller; a full chunk goes to prepare.
	b *types.Builder
	// keys, for a table with a primary key, finds a key the statement
	// proposes twice; a piece is sorted by column sortBy first, unless -1
	// (statement_keys.go).
	keys   statementKeys
	sortBy int
	// check, when set, sees each piece once prepared (its type modifiers
	// applied): a keyed statement's checks against the table.
	check func(*types.Chunk) error
	// filter, when set, turns each piece's rows into what is written
	// before it is prepared: ON CONFLICT DO NOTHING drops rows
	// (skipTaken), DO UPDATE makes inserts and update pairs (upsertPiece).
	filter func(*types.Chunk) (*types.Chunk, error)
	// returning, when set, computes RETURNING over each piece's rows as
	// they are written (type modifiers applied), in their order.
	returning *returningRows
	pieces    []*engine.Prepared
	later     []*engine.Prepared // an upsert's update pairs, written last
	rows      int                // the rows prepared (inserted, or updated: an update pair is one)
	payloads  engine.PieceBuffer // the pieces are encoded into it in turn
	retErr    error              // RETURNING's first error (returningErr)
}

func (s *Session) newPieceLoader(rel *catalog.Relation, vis []types.Type, check func(*types.Chunk) error) *pieceLoader {
	l := &pieceLoader{s: s, rel: rel, b: types.NewBuilder(vis, copyPieceRows), check: check, sortBy: -1}
	if hasDeclaredPK(rel) {
		l.keys, l.sortBy = newStatementKeys(rel)
	}
	return l
}

// prepare prepares the full chunk c as a piece (or two) and checks it.
func (l *pieceLoader) prepare(ctx context.Context, c *types.Chunk) error {
	if l.filter != nil {
		kept, err := l.filter(c)
		if err != nil {
			return err
		}
		if kept != c {
			l.b.Recycle(c) // its kept rows are copied
			if c = kept; c == nil || c.Cardinality() == 0 {
				return nil
			}
		}
	}
	// An error in RETURNING is the statement's only once every piece's
	// rows pass their checks (held back: returned by returningErr): a
	// row with a taken key fails with 23505 first, and a row an open
	// block holds makes the statement wait and run again, as each row
	// does in Postgres before its RETURNING is computed.
	if l.returning != nil && l.retErr == nil {
		if err := engine.Conform(l.rel, c); err != nil {
			return err
		}
		l.retErr = l.returning.add(c)
	}
	// An upsert's update pairs go in pieces of their own, written after
	// every piece of inserts: the inserts stay plain, so the table's tail
	// and its materialize keep them as sorted runs, not boxed (a piece
	// with one pair was boxed whole, and a materialize boxes every insert
	// of an epoch after its first update). The statement's keys are
	// distinct, so the order of its records changes nothing else.
	inserts, pairs := splitPairs(c)
	if inserts != nil {
		if err := l.preparePiece(ctx, inserts, &l.pieces); err != nil {
			return err
		}
	}
	if pairs != nil {
		if err := l.preparePiece(ctx, pairs, &l.later); err != nil {
			return err
		}
	}
	return nil
}

// returningErr is the first error RETURNING met, once every piece is
// prepared and checked.
func (l *pieceLoader) returningErr() error { return l.retErr }

// preparePiece prepares c as a piece, adds it to to, and checks it.
func (l *pieceLoader) preparePiece(ctx context.Context, c *types.Chunk, to *[]*engine.Prepared) error {
	if l.sortBy >= 0 {
		if sorted := sortPiece(c, l.sortBy); sorted != c {
			l.b.Recycle(c)
			c = sorted
		}
	}
	p, err := l.s.e.Prepare(ctx, l.rel, c, &l.payloads)
	if err != nil {
		return err
	}
	*to, l.rows = append(*to, p), l.rows+written(c)
	if l.keys != nil {
		if err := l.keys.propose(ctx, c); err != nil {
			return err
		}
	}
	if l.check != nil {
		if err := l.check(c); err != nil {
			return err
		}
	}
	if !p.KeepsRows() {
		l.b.Recycle(c) // the next piece fills the same columns
	}
	return nil
}

// splitPairs returns c's plain inserts and its update pairs, each nil
// when c has none (c itself when it has only one kind).
func splitPairs(c *types.Chunk) (inserts, pairs *types.Chunk) {
	if !slices.ContainsFunc(c.Ops, func(op types.Op) bool { return op != types.Insert }) {
		return c, nil // a COPY's piece: no index is built
	}
	var ins, upd []int
	for i := range c.Capacity() {
		switch {
		case !c.Visible(i):
		case c.Op(i) == types.Insert:
			ins = append(ins, i)
		default:
			upd = append(upd, i)
		}
	}
	switch {
	case len(upd) == 0:
		return c, nil
	case len(ins) == 0:
		return nil, c
	}
	return gatherRows(c, ins), gatherRows(c, upd)
}

// finish prepares the rows left in b, and finds a key proposed twice.
func (l *pieceLoader) finish(ctx context.Context) error {
	if c := l.b.Take(); c != nil {
		if err := l.prepare(ctx, c); err != nil {
			return err
		}
	}
	l.pieces, l.later = append(l.pieces, l.later...), nil
	if load := l.s.e.FinishBulkLoad(l.rel, &l.payloads, len(l.pieces)); load != nil {
		// Written first: the record names the file of the rows the
		// pieces after it hold.
		l.pieces = append([]*engine.Prepared{load}, l.pieces...)
	}
	l.payloads = engine.PieceBuffer{} // every piece is prepared
	if l.keys != nil {
		return l.keys.finish()
	}
	return nil
}

// release removes the segments of pieces never written (the statement
// failed).
func (l *pieceLoader) release() {
	l.payloads.Release()
	for _, p := range append(l.pieces, l.later...) {
		p.Release(l.s.e)
	}
	l.pieces, l.later = nil, nil
}

// insertQueryPieces runs an INSERT's query over sn and writes its rows in
// pieces: an INSERT … SELECT of millions of rows is held as a COPY's is,
// never whole. tw's lock is held throughout, so each piece's keys are
// checked against sn (the table's latest state) as it is prepared, and
// against the statement's earlier keys. The pieces are one synced batch:
// all of the statement or none of it. ret, when set, keeps the RETURNING
// rows of those written.
func (s *Session) insertQueryPieces(ctx context.Context, tw *engine.TableWriter, sn *storage.Snapshot, ins *planner.Insert,
	ret *returningRows) (n int, err error) {
	rel := ins.Table
	// A key an open block holds makes the statement wait for the block and
	// run again (retryLocked), but only once every piece is checked: a key
	// the table holds or the statement repeats fails it at once instead.
	var check func(*types.Chunk) error
	var locked error
	if hasDeclaredPK(rel) {
		keys := newPKReader(rel)
		check = func(c *types.Chunk) error {
			if err := tw.CheckKeyLocks(c); err != nil {
				if !errors.As(err, new(*engine.KeyLockedError)) {
					return err
				}
				locked = cmp.Or(locked, err)
			}
			if ins.OnConflict != nil {
				return nil // the filter read the table
			}
			return rowsAbsent(ctx, sn, keys, c)
		}
	}
	l := s.newPieceLoader(rel, visibleTypes(rel), check)
	l.returning = ret
	if err := s.onConflict(ctx, l, sn, ins); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			l.release()
		}
	}()
	err = s.runBatchOn(ctx, sn, ins.Query, func(r types.Row) error {
		if c := l.b.Append(types.Insert, r); c != nil {
			return l.prepare(ctx, c)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := l.finish(ctx); err != nil || l.rows == 0 {
		return 0, err
	}
	if locked != nil {
		return 0, locked
	}
	if err := l.returningErr(); err != nil {
		return 0, err
	}
	return l.rows, s.commitPieces(ctx, tw, l.pieces)
}

// onConflict sets l's filter for ins's ON CONFLICT clause: DO NOTHING
// drops the rows whose key is taken, DO UPDATE turns rows into the changes
// they make. Either finds a key the statement proposes twice itself.
func (s *Session) onConflict(ctx context.Context, l *pieceLoader, sn *storage.Snapshot, ins *planner.Insert) error {
	switch {
	case skipsInPieces(ins):
		l.filter = skipFilter(ctx, sn, ins.Table)
	case updatesInPieces(ins):
		f, err := s.upsertFilter(ctx, sn, ins)
		if err != nil {
			return err
		}
		l.filter = f
	default:
		return nil
	}
	l.keys = nil
	return nil
}

// commitPieces writes a bulk statement's prepared pieces under tw's lock,
// one synced batch; a transaction block keeps them until its COMMIT
// (pieces of new row ids only: engine.Txn).
func (s *Session) commitPieces(ctx context.Context, tw *engine.TableWriter, pieces []*engine.Prepared) error {
	for _, p := range pieces {
		if err := tw.StagePrepared(p); err != nil {
			tw.Discard()
			return err
		}
	}
	if s.tx != nil {
		return nil
	}
	return s.e.Commit(ctx, tw)
}

// written returns the rows c inserts or updates (an update pair is one).
func written(c *types.Chunk) int {
	n := 0
	for i := range c.Capacity() {
		if c.Visible(i) && c.Op(i).IsInsert() {
			n++
		}
	}
	return n
}
