package session

import (
	"context"
	"os"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// An UPDATE that changes primary keys may move a row onto a key another
// row of the statement vacates (SET id = id + 1): written pair by pair,
// the new row would land on that key before the old one left it. So such
// a statement deletes every old row before it inserts any new one. It
// collected both, boxed (1.4 GB for two million rows); now it writes the
// deletes in pieces as it reads, keeps the new rows in a spool (memory,
// then a file) and the old rows' keys in a set, and then writes the new
// rows in pieces, each checked: no two new rows share a key (23505), and
// a new key the table holds must be one the statement vacates. All of it
// is one synced batch, deletes first, as before.

// updateMovingKeysInPieces runs an UPDATE that moves keys over sn, in
// pieces; ret, when set, takes the RETURNING rows (the new rows).
func (s *Session) updateMovingKeysInPieces(ctx context.Context, tw *engine.TableWriter, sn *storage.Snapshot, u *planner.Update,
	ret *returningRows) (n int, err error) {
	rel := u.Table
	dels, ins := s.newChangePieces(tw, rel, nil), s.newChangePieces(tw, rel, ret)
	defer func() {
		if err != nil {
			dels.l.release()
			ins.l.release()
		}
	}()
	vacated := map[string]struct{}{}
	keys := newPKReader(rel)
	news := batch.NewSpool(rel.Table.Types, os.TempDir(), returningSpoolBytes)
	defer news.Close()
	cols := len(rel.Columns)
	err = s.runBatchOn(ctx, sn, u.Query, func(r types.Row) error {
		old, new := r[:cols:cols], r[cols:2*cols:2*cols]
		_, key, err := keys.readRow(old)
		if err != nil {
			return err
		}
		vacated[string(key)] = struct{}{}
		if err := news.Add(new); err != nil {
			return err
		}
		return dels.add(ctx, old, nil)
	})
	if err == nil {
		err = dels.l.finish(ctx)
	}
	if err != nil {
		return 0, err
	}
	ins.l.keys, ins.l.sortBy = newStatementKeys(rel) // no key twice
	ins.l.check = func(c *types.Chunk) error {
		if err := ins.check(c); err != nil {
			return err
		}
		return absentUnlessVacated(ctx, sn, newPKReader(rel), vacated, c)
	}
	if err := news.Each(ctx, func(row types.Row) error { return ins.insert(ctx, row) }); err != nil {
		return 0, err
	}
	if err := ins.l.finish(ctx); err != nil {
		return 0, err
	}
	if err := firstLocked(dels.locked, ins.locked); err != nil {
		return 0, err // waits for the block, then runs again
	}
	if err := ins.l.returningErr(); err != nil {
		return 0, err
	}
	return news.Len(), s.commitPieces(ctx, tw, append(dels.l.pieces, ins.l.pieces...))
}

// firstLocked is the first of errs that is set.
func firstLocked(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// insert adds a plain insert and prepares the piece it fills.
func (p *changePieces) insert(ctx context.Context, row types.Row) error {
	if c := p.l.b.Append(types.Insert, row); c != nil {
		return p.l.prepare(ctx, c)
	}
	return nil
}

// absentUnlessVacated fails with 23505 when a row of c has a key the
// table holds in sn, unless the statement vacates it (deletes its row).
func absentUnlessVacated(ctx context.Context, sn *storage.Snapshot, keys *pkReader, vacated map[string]struct{}, c *types.Chunk) error {
	desc := storage.TableDesc(keys.rel.Table)
	for i := range c.Capacity() {
		if i%256 == 255 && ctx.Err() != nil {
			return ctx.Err()
		}
		pk, key, err := keys.read(c, i)
		if err != nil {
			return err
		}
		if _, ok := vacated[string(key)]; ok {
			continue
		}
		if _, found, err := sn.Get(ctx, desc, pk); err != nil {
			return err
		} else if found {
			return keys.duplicate(pk)
		}
	}
	return nil
}
