package session

import (
	"cmp"
	"context"
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// `INSERT INTO t SELECT … ON CONFLICT (k) DO UPDATE SET …`, the bulk
// upsert, collected every proposed row too. It now writes pieces: each
// piece's rows become its changes (upsertPiece), an insert for a key the
// table does not hold and an update pair for one it does, computed from
// the statement's snapshot. A key proposed again after the statement
// inserted or updated its row fails it with 21000, as in Postgres, so no
// piece changes a row an earlier piece wrote, and the snapshot is the
// right state to read for every piece.

// updatesInPieces reports whether ins is an INSERT … SELECT … ON CONFLICT
// DO UPDATE that insertQueryPieces writes in pieces.
func updatesInPieces(ins *planner.Insert) bool {
	return ins.OnConflict != nil && !ins.OnConflict.DoNothing && hasDeclaredPK(ins.Table)
}

// upsertFilter returns the filter that turns each piece's proposed rows
// into their changes.
func (s *Session) upsertFilter(ctx context.Context, sn *storage.Snapshot, ins *planner.Insert) (func(*types.Chunk) (*types.Chunk, error), error) {
	up, err := newConflictUpdate(ins.OnConflict, s.now())
	if err != nil {
		return nil, err
	}
	rel := ins.Table
	if oneBigintKey(rel) {
		return newUpsertPiece(ctx, sn, rel, int64Keys(rel.PK[0]), up).changes, nil
	}
	return newUpsertPiece(ctx, sn, rel, encodedKeys(newPKReader(rel)), up).changes, nil
}

// upsertPiece turns a piece's proposed rows into changes.
type upsertPiece[K cmp.Ordered] struct {
	keyedPieces[K]
	up *conflictUpdate
	ts []types.Type
	// Per proposed row: the row it replaces and the row it writes (nil:
	// none; a new row without an old one is an insert).
	olds, news []types.Row
}

func newUpsertPiece[K cmp.Ordered](ctx context.Context, sn *storage.Snapshot, rel *catalog.Relation, keys pieceKeys[K],
	up *conflictUpdate) *upsertPiece[K] {
	return &upsertPiece[K]{keyedPieces: newKeyedPieces(ctx, sn, rel, keys), up: up, ts: visibleTypes(rel)}
}

// changes returns the changes c's proposed rows make, in their order:
// the table's rows are read in key order, the changes made in the rows'.
// As in Postgres a key fails the statement with 21000 only when a second
// proposal meets a row the statement inserted or updated: after a
// proposal that WHERE turned away, the next one meets the table's row.
func (d *upsertPiece[K]) changes(c *types.Chunk) (*types.Chunk, error) {
	if err := d.sort(c); err != nil {
		return nil, err
	}
	keys := d.piece
	d.olds = append(d.olds[:0], make([]types.Row, len(keys))...)
	d.news = append(d.news[:0], make([]types.Row, len(keys))...)
	var affected []K
	var old types.Row
	touched := false // the current key was inserted or updated
	for j, i := range d.order {
		if j%256 == 255 && d.ctx.Err() != nil {
			return nil, d.ctx.Err()
		}
		if j == 0 || keys[i] != keys[d.order[j-1]] {
			var err error
			if old, touched, err = d.first(c, i); err != nil {
				return nil, err
			}
		}
		if touched {
			return nil, errAffectTwice()
		}
		row := c.Row(i)
		if old == nil {
			d.news[i], touched = row, true
		} else if nu, ok, err := d.up.apply(old, row); err != nil {
			return nil, err
		} else if ok {
			d.olds[i], d.news[i], touched = old, nu, true
		}
		if touched {
			affected = append(affected, keys[i])
		}
	}
	slices.Sort(affected)
	d.seen.add(affected)
	b := types.NewUnboundedBuilder(d.ts)
	for i, nu := range d.news {
		switch {
		case nu == nil:
		case d.olds[i] == nil:
			b.Append(types.Insert, nu)
		default:
			b.Append(types.UpdateDelete, d.olds[i])
			b.Append(types.UpdateInsert, nu)
		}
	}
	clear(d.olds)
	clear(d.news)
	return b.Take(), nil
}

// first reads the table's row for the key of row i, the first of its
// proposals in the piece, and whether an earlier piece touched the key.
func (d *upsertPiece[K]) first(c *types.Chunk, i int) (types.Row, bool, error) {
	if d.seen.has(d.piece[i]) {
		return nil, true, nil
	}
	old, found, err := d.get(c, i)
	if err != nil || !found {
		return nil, false, err
	}
	return old, false, nil
}

// errAffectTwice is Postgres's error for a key a DO UPDATE proposes twice.
func errAffectTwice() error {
	return sqlerr.New(sqlerr.Code("21000"), "ON CONFLICT DO UPDATE command cannot affect row a second time").
		WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
}
