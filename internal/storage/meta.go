package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Meta is a small key-value space beside the state tables for things that
// are not rows: catalog blobs (PutMeta, synced at once) and positions that
// must move with an epoch (StageMeta or Commit's meta argument).

// MetaEntry is one meta key and its value.
type MetaEntry struct {
	Name  string
	Value []byte
}

// Meta returns the committed value of a meta entry.
func (s *Store) Meta(name string) ([]byte, bool, error) {
	return getMeta(s.db, name)
}

func getMeta(r pebble.Reader, name string) ([]byte, bool, error) {
	v, closer, err := r.Get(metaKey(name))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("storage: get meta %q: %w", name, err)
	}
	defer closer.Close()
	return slices.Clone(v), true, nil
}

// PutMeta writes a meta entry at once, synced, outside any epoch: for
// catalog changes that must be durable before they are acknowledged.
func (s *Store) PutMeta(ctx context.Context, name string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(metaKey(name), value, nil); err != nil {
		return fmt.Errorf("storage: put meta %q: %w", name, err)
	}
	if err := s.applyAcked(b); err != nil {
		return fmt.Errorf("storage: put meta %q: %w", name, err)
	}
	return nil
}

// DeleteMeta deletes a meta entry at once, synced.
func (s *Store) DeleteMeta(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Delete(metaKey(name), nil); err != nil {
		return fmt.Errorf("storage: delete meta %q: %w", name, err)
	}
	if err := s.applyAcked(b); err != nil {
		return fmt.Errorf("storage: delete meta %q: %w", name, err)
	}
	return nil
}

// applyAcked commits b, synced, as an acknowledged write (acked.go).
func (s *Store) applyAcked(b *pebble.Batch) error {
	if err := s.disk.check(len(b.Repr())); err != nil {
		return err
	}
	s.dml.mu.Lock()
	count, err := s.acked.assignLocked(b)
	if err == nil {
		err = s.db.ApplyNoSyncWait(b, pebble.Sync)
	}
	s.dml.mu.Unlock()
	if err != nil {
		return err
	}
	if err := b.SyncWait(); err != nil {
		return err
	}
	s.recordAcked(count)
	return nil
}

// ScanMeta returns every committed meta entry whose name starts with prefix,
// in name order.
func (s *Store) ScanMeta(ctx context.Context, prefix string) ([]MetaEntry, error) {
	return scanMeta(ctx, s.db, prefix)
}

func scanMeta(ctx context.Context, r pebble.Reader, prefix string) ([]MetaEntry, error) {
	lo := metaKey(prefix)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return nil, fmt.Errorf("storage: scan meta %q: %w", prefix, err)
	}
	defer it.Close()
	var out []MetaEntry
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, MetaEntry{
			Name:  string(it.Key()[len(keyMetaPrefix):]),
			Value: slices.Clone(it.Value()),
		})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("storage: scan meta %q: %w", prefix, err)
	}
	return out, nil
}

// writeMeta adds meta writes to a batch; a nil value deletes.
func writeMeta(b *pebble.Batch, m map[string][]byte) error {
	for name, v := range m {
		var err error
		if v == nil {
			err = b.Delete(metaKey(name), nil)
		} else {
			err = b.Set(metaKey(name), v, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
