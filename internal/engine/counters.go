package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/storage"
)

// rowErrorCounter counts row-level expression errors in streaming jobs.
type rowErrorCounter struct{ n atomic.Uint64 }

func (c *rowErrorCounter) add(error)    { c.n.Add(1) }
func (c *rowErrorCounter) load() uint64 { return c.n.Load() }

// rowIDAllocator hands out hidden row ids for tables without a primary
// key. Ids are reserved in blocks whose end is written durably before any
// id of the block is used, so an id is never handed out twice, even across
// a crash (a crash only skips the rest of a block).
type rowIDAllocator struct {
	store *storage.Store
	mu    struct {
		sync.Mutex
		next, end map[uint32]int64
	}
}

const rowIDBlock = 1 << 16

func (a *rowIDAllocator) init(s *storage.Store) {
	a.store = s
	a.mu.next = map[uint32]int64{}
	a.mu.end = map[uint32]int64{}
}

func rowIDKey(table uint32) string { return fmt.Sprintf("rowid/%010d", table) }

// take returns n consecutive fresh row ids for table.
func (a *rowIDAllocator) take(ctx context.Context, table uint32, n int) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	next, ok := a.mu.next[table]
	if !ok {
		v, found, err := a.store.Meta(rowIDKey(table))
		if err != nil {
			return 0, err
		}
		next = 1
		if found && len(v) == 8 {
			next = int64(binary.BigEndian.Uint64(v))
		}
		a.mu.end[table] = next
	}
	if next+int64(n) > a.mu.end[table] {
		end := next + int64(n) + rowIDBlock
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], uint64(end))
		if err := a.store.PutMeta(ctx, rowIDKey(table), buf[:]); err != nil {
			return 0, err
		}
		a.mu.end[table] = end
	}
	a.mu.next[table] = next + int64(n)
	return next, nil
}
