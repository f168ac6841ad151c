package storage

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// DropTableState deletes every key of a table: its state rows, its DML log
// and its staged-but-uncommitted batches, in one synced batch. It is
// idempotent, so a drop interrupted by a crash is finished by running it
// again. StateTables opened before the drop can no longer seal
// (ErrTableDropped); the table's actors are expected to be stopped first.
func (s *Store) DropTableState(ctx context.Context, tableID uint32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Hold commitMu so that no Commit that already took this table's staged
	// batches can write them after the range deletion.
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.mu.dropGen[tableID]++
	s.discardLocked(func(sb *stagedBatch) bool { return sb.table == tableID })
	s.mu.Unlock()

	s.dml.mu.Lock()
	defer s.dml.mu.Unlock()
	if t := s.dml.mu.tables[tableID]; t != nil {
		close(t.changed) // waiters reload the (now empty) log
		delete(s.dml.mu.tables, tableID)
	}
	b := s.db.NewBatch()
	defer b.Close()
	tp, dp, cp := tablePrefix(tableID), dmlPrefix(tableID), rowCountPrefix(tableID)
	if err := b.DeleteRange(tp, prefixEnd(tp), nil); err != nil {
		return fmt.Errorf("storage: drop table %d: %w", tableID, err)
	}
	if err := b.DeleteRange(cp, prefixEnd(cp), nil); err != nil {
		return fmt.Errorf("storage: drop table %d: %w", tableID, err)
	}
	if err := b.DeleteRange(dp, prefixEnd(dp), nil); err != nil {
		return fmt.Errorf("storage: drop table %d: %w", tableID, err)
	}
	if gp := dmlGatePrefix(tableID); b.DeleteRange(gp, prefixEnd(gp), nil) != nil {
		return fmt.Errorf("storage: drop table %d: delete dml gates", tableID)
	}
	if err := b.Delete(keyDMLHigh(tableID), nil); err != nil {
		return fmt.Errorf("storage: drop table %d: %w", tableID, err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("storage: drop table %d: %w", tableID, err)
	}
	s.points.changed()
	if err := s.removeSegmentsOf(tableID, func(string) bool { return true }); err != nil {
		return fmt.Errorf("storage: drop table %d: %w", tableID, err)
	}
	s.DropTail(tableID)
	return nil
}

// TableKeyCount returns the number of live keys of a table (state rows and
// DML records), so tests can prove a drop left nothing behind.
func (s *Store) TableKeyCount(tableID uint32) (int, error) {
	n := 0
	for _, p := range [][]byte{tablePrefix(tableID), dmlPrefix(tableID), keyDMLHigh(tableID), rowCountPrefix(tableID)} {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
		if err != nil {
			return 0, fmt.Errorf("storage: count keys of table %d: %w", tableID, err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		err = it.Error()
		_ = it.Close()
		if err != nil {
			return 0, fmt.Errorf("storage: count keys of table %d: %w", tableID, err)
		}
	}
	return n, nil
}

// HasKeys reports whether any key of the table is left.
func (s *Store) HasKeys(tableID uint32) (bool, error) {
	n, err := s.TableKeyCount(tableID)
	return n > 0, err
}

// TableDiskBytes estimates the bytes of a table's state rows in the
// store's files (Pebble's estimate over the table's key range: whole
// files and blocks, memtables not counted). Cheap enough for every
// scrape.
func (s *Store) TableDiskBytes(tableID uint32) (uint64, error) {
	p := tablePrefix(tableID)
	n, err := s.db.EstimateDiskUsage(p, prefixEnd(p))
	if err != nil {
		return 0, fmt.Errorf("storage: disk usage of table %d: %w", tableID, err)
	}
	return n, nil
}
