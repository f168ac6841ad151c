package mview

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// rowStore is the view's table with a cache in front: encoded PK → stored
// row, or nil for "known absent". Every write goes to both, so the cache
// never disagrees with the table; an evicted or never-seen key is read from
// the table, which is why a cache of any size (even 1) is correct.
type rowStore struct {
	table   *storage.StateTable
	cache   *storage.LRU[string, types.Row]
	pkTypes []types.Type
	orders  []codec.Order
	scratch []byte
}

func newRowStore(table *storage.StateTable, t plan.Table, cacheEntries int) *rowStore {
	s := &rowStore{table: table, cache: storage.NewLRU[string, types.Row](cacheEntries), orders: t.Orders}
	for _, c := range t.PK {
		s.pkTypes = append(s.pkTypes, t.Types[c])
	}
	return s
}

// key returns the row's primary key and its encoding. Two rows have the
// same key exactly when the table would store them under one key (numeric
// 1.0 and 1.00, say), because the table uses the same encoding.
func (s *rowStore) key(row types.Row) (types.Row, string, error) {
	pk := s.table.PKOf(row)
	enc, err := codec.EncodeKey(s.scratch[:0], pk, s.pkTypes, s.orders)
	if err != nil {
		return nil, "", fmt.Errorf("mview: encode pk: %w", err)
	}
	s.scratch = enc
	return pk, string(enc), nil
}

// get returns the stored row under pk (encoded as key), or ok=false.
func (s *rowStore) get(ctx context.Context, pk types.Row, key string) (types.Row, bool, error) {
	if row, hit := s.cache.Get(key); hit {
		return row, row != nil, nil
	}
	row, ok, err := s.table.Get(ctx, pk)
	if err != nil {
		return nil, false, fmt.Errorf("mview: read table: %w", err)
	}
	if !ok {
		row = nil
	}
	s.cache.Put(key, row)
	return row, ok, nil
}

// put stores row under key, replacing whatever was there.
func (s *rowStore) put(row types.Row, key string) error {
	if err := s.table.Insert(row); err != nil {
		return fmt.Errorf("mview: write table: %w", err)
	}
	s.cache.Put(key, row)
	return nil
}

// insertUnread stores a row whose key the caller knows holds nothing,
// without reading it: the cache forgets the key (it may say "known
// absent", from a delete) rather than taking the row. The table keeps
// row: the caller must not change it.
func (s *rowStore) insertUnread(row types.Row, key string) error {
	if err := s.table.InsertAbsent(row); err != nil {
		return fmt.Errorf("mview: write table: %w", err)
	}
	s.cache.Delete(key)
	return nil
}

// remove deletes the stored row under key.
func (s *rowStore) remove(stored types.Row, key string) error {
	if err := s.table.Delete(stored); err != nil {
		return fmt.Errorf("mview: write table: %w", err)
	}
	s.cache.Put(key, nil)
	return nil
}

// forget empties the cache (it may only ever be emptied, never wrong).
func (s *rowStore) forget() {
	if s.cache.Len() > 0 {
		s.cache.Clear()
	}
}
