package session

import (
	"context"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// A COPY into a table with a primary key read every row into one chunk,
// checked its keys, then encoded the whole of it as one record: the
// statement was held decoded and encoded at once (a four-million-row COPY
// of three bigints: 92 and 53 MB), and the table's source read the record
// back whole. So it reads pieces as a COPY into a table keyed by its
// hidden row id does (loadPieces): each piece's keys are checked against
// the statement's earlier ones as it is read, and the piece is encoded to
// a segment of its own (engine.Prepare) and let go. At the end, under the
// table's write lock, each piece is decoded again from its segment and
// its keys checked against the table's latest state, and the pieces are
// written in one synced batch: all or nothing, in one epoch.

// loadKeyedPieces reads a COPY into a table with a primary key piece by
// piece, and writes the pieces together once their keys are checked.
func (s *Session) loadKeyedPieces(ctx context.Context, rel *catalog.Relation, vis []types.Type, read func([]types.Column) error, dr datumReader) (int, error) {
	// The pieces' keys are checked against each other by the loader
	// (statementKeys), once prepared: Prepare applies the columns' type
	// modifiers in place (numeric(4, 1) makes 1.01 and 1.04 one key) and
	// refuses a NULL key (23502, not 23505).
	return s.readPieces(ctx, rel, vis, read, dr, nil, s.writeKeyedPieces)
}

// proposeKeys fails with 23505 if a row of c proposes a key the statement
// proposed before.
func proposeKeys(ctx context.Context, keys *pkReader, proposed *proposedKeys, c *types.Chunk) error {
	for i := range c.Capacity() {
		if i%1024 == 1023 && ctx.Err() != nil {
			return ctx.Err()
		}
		pk, key, err := keys.read(c, i)
		if err != nil {
			return err
		}
		if proposed.add(key) {
			return keys.duplicate(pk)
		}
	}
	return nil
}

// writeKeyedPieces checks the pieces' keys against the table's latest
// state under its write lock and writes them.
func (s *Session) writeKeyedPieces(ctx context.Context, rel *catalog.Relation, pieces []*engine.Prepared) error {
	tw, done, err := s.lockTable(ctx, rel)
	if err != nil {
		return err
	}
	defer done()
	sn, err := s.latest(ctx)
	if err != nil {
		return err
	}
	defer sn.Close()
	keys := newPKReader(rel)
	for _, p := range pieces {
		if err := checkAbsent(ctx, sn, tw, keys, p); err != nil {
			return err
		}
	}
	return s.commitPieces(ctx, tw, pieces)
}

// checkAbsent fails with 23505 if sn holds the key of a row of piece p,
// and with a KeyLockedError if an open transaction block holds one.
func checkAbsent(ctx context.Context, sn *storage.Snapshot, tw *engine.TableWriter, keys *pkReader, p *engine.Prepared) error {
	c, err := p.Rows()
	if err != nil {
		return err
	}
	if err := tw.CheckKeyLocks(c); err != nil {
		return err
	}
	return rowsAbsent(ctx, sn, keys, c)
}

// rowsAbsent fails with 23505 if sn holds the key of a row of c.
func rowsAbsent(ctx context.Context, sn *storage.Snapshot, keys *pkReader, c *types.Chunk) error {
	desc := storage.TableDesc(keys.rel.Table)
	for i := range c.Capacity() {
		if i%256 == 255 && ctx.Err() != nil {
			return ctx.Err()
		}
		pk, _, err := keys.read(c, i)
		if err != nil {
			return err
		}
		_, found, err := sn.Get(ctx, desc, pk)
		if err != nil {
			return err
		}
		if found {
			return keys.duplicate(pk)
		}
	}
	return nil
}
