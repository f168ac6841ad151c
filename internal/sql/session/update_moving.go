package session

import (
	"context"
	"os"
	"slices"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// An UPDATE that changes primary keys may move a row onto a key another
// row of the statement vacates (SET id = id + 1): written pair by pair,
// the new row would land on that key before the old one left it. So such
// a statement deletes every old row before it inserts any new one. It
// collected both, boxed (1.4 GB for two million rows); now it writes the
// deletes in pieces as it reads, keeps the new rows in a spool (memory,
// then a file) and the old rows' keys in a set (keySet), and then writes
// the new rows in pieces, each checked: no two new rows share a key
// (23505), and a new key the table holds must be one the statement
// vacates. All of it is one synced batch, deletes first, as before. A
// row an open block holds makes the statement wait for the block and run
// again, before a 23505 it may cause: the block may yet free the key.

// updateMovingKeysInPieces runs an UPDATE that moves keys over sn, in
// pieces; ret, when set, takes the RETURNING rows (the new rows).
func (s *Session) updateMovingKeysInPieces(ctx context.Context, tw *engine.TableWriter, sn *storage.Snapshot, u *planner.Update,
	ret *returningRows) (n int, err error) {
	m := &movedRows{dels: s.newChangePieces(tw, u.Table, nil), ins: s.newChangePieces(tw, u.Table, ret),
		vacated: newKeySet(u.Table), news: batch.NewSpool(u.Table.Table.Types, os.TempDir(), returningSpoolBytes)}
	defer m.news.Close()
	defer func() {
		if err != nil {
			m.dels.l.release()
			m.ins.l.release()
		}
	}()
	if err := s.deleteMoved(ctx, sn, u, m); err != nil {
		return 0, err
	}
	if err := m.insertMoved(ctx, sn, u.Table); err != nil {
		return 0, err
	}
	if err := m.ins.l.returningErr(); err != nil {
		return 0, err
	}
	return m.news.Len(), s.commitPieces(ctx, tw, append(m.dels.l.pieces, m.ins.l.pieces...))
}

// movedRows is an UPDATE moving keys under way: its deletes, its inserts,
// the keys it vacates and its new rows.
type movedRows struct {
	dels, ins *changePieces
	vacated   *keySet
	news      *batch.Spool
}

// deleteMoved runs u's query, preparing the old rows' deletes and keeping
// their keys and the new rows.
func (s *Session) deleteMoved(ctx context.Context, sn *storage.Snapshot, u *planner.Update, m *movedRows) error {
	keys := newPKReader(u.Table)
	cols := len(u.Table.Columns)
	err := s.runBatchOn(ctx, sn, u.Query, func(r types.Row) error {
		old, new := r[:cols:cols], r[cols:2*cols:2*cols]
		pk, key, err := keys.readRow(old)
		if err != nil {
			return err
		}
		m.vacated.add(pk, key)
		if err := m.news.Add(slices.Clone(new)); err != nil { // not the old row's half
			return err
		}
		return m.dels.add(ctx, old, nil)
	})
	if err == nil {
		err = m.dels.l.finish(ctx)
	}
	if err == nil && m.dels.locked != nil {
		err = m.dels.locked // a block holds an old row: wait, then run again
	}
	return err
}

// insertMoved prepares the new rows' inserts, checked.
func (m *movedRows) insertMoved(ctx context.Context, sn *storage.Snapshot, rel *catalog.Relation) error {
	m.vacated.done()
	ins := m.ins
	ins.l.keys, ins.l.sortBy = newStatementKeys(rel) // no key twice
	ins.l.check = func(c *types.Chunk) error {
		if err := ins.check(c); err != nil {
			return err
		}
		return absentUnlessVacated(ctx, sn, newPKReader(rel), m.vacated, c)
	}
	err := m.news.Each(ctx, func(row types.Row) error { return ins.insert(ctx, row) })
	if err == nil {
		err = ins.l.finish(ctx)
	}
	if e, ok := sqlerr.As(err); ok && e.Code == sqlerr.UniqueViolation && ins.locked != nil {
		// A block holds a new key (its delete of the row there may yet
		// commit): wait for it, as Postgres does, then run again.
		return ins.locked
	}
	if err == nil {
		err = ins.locked
	}
	return err
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
func absentUnlessVacated(ctx context.Context, sn *storage.Snapshot, keys *pkReader, vacated *keySet, c *types.Chunk) error {
	desc := storage.TableDesc(keys.rel.Table)
	for i := range c.Capacity() {
		if i%256 == 255 && ctx.Err() != nil {
			return ctx.Err()
		}
		pk, key, err := keys.read(c, i)
		if err != nil {
			return err
		}
		if vacated.has(pk, key) {
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

// keySet is a set of primary keys: of one bigint as a sorted []int64 (8
// bytes a key), of any other as their encodings. Add every key, then call
// done before has.
type keySet struct {
	ints    []int64
	encoded map[string]struct{}
}

func newKeySet(rel *catalog.Relation) *keySet {
	if len(rel.PK) == 1 && rel.Columns[rel.PK[0]].Type == types.TInt64 {
		return &keySet{}
	}
	return &keySet{encoded: map[string]struct{}{}}
}

// add adds key pk (encoded: key).
func (k *keySet) add(pk types.Row, key []byte) {
	if k.encoded != nil {
		k.encoded[string(key)] = struct{}{}
	} else if v, ok := pk[0].(int64); ok {
		k.ints = append(k.ints, v)
	}
}

// done sorts the set for has.
func (k *keySet) done() { slices.Sort(k.ints) }

// has reports whether the set holds pk (encoded: key).
func (k *keySet) has(pk types.Row, key []byte) bool {
	if k.encoded != nil {
		_, ok := k.encoded[string(key)]
		return ok
	}
	v, ok := pk[0].(int64)
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(k.ints, v)
	return found
}
