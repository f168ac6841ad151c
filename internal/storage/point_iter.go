package storage

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluice-db/sluice/internal/types"
)

// pointIters pools Pebble iterators for point reads of keys that are
// usually absent: an INSERT's check of its primary key.
//
// DB.Get builds a new iterator over every file that may hold the key on
// each call, and it reads no bloom filter of the last level: a missing
// key cost a search of that level's index and a data block. Of a
// single-row INSERT's 90 µs of CPU, its key check took 10. A pooled
// iterator keeps its files open between reads and is built with
// UseL6Filters, so an absent key is mostly answered by filters.
//
// An iterator sees the database as it was when it was made. gen counts
// the changes a point read must see: an iterator made at gen g sees every
// change counted up to g, so a reader that needs the changes up to want
// takes one whose gen ≥ want. A change is counted once it is visible in
// Pebble: a commit, a dropped table, and the prune of a table's tail
// (PruneTail counts itself before it removes anything, under the tails'
// lock, so a reader that misses a pruned write in the tail wants an
// iterator made after the prune, hence after the commit that holds the
// write; the prune runs in the background and may see a commit before
// Commit has returned).
//
// Iterators made before the last change are closed when they come back,
// or when a reader or the next change finds them idle; none is reused
// past pointIterMaxAge, so that while barriers are stuck (no commit for
// minutes) the pool does not pin the memtables and files of the moment
// they stopped.
type pointIters struct {
	gen atomic.Uint64
	mu  struct {
		sync.Mutex
		free   []*pointIter
		closed bool
	}
	// inUse counts the iterators handed out, so that close waits for
	// them before the database closes.
	inUse sync.WaitGroup
}

// pointIter is one pooled iterator, the gen it was made at, and when.
type pointIter struct {
	it   *pebble.Iterator
	gen  uint64
	made time.Time
}

// pointIterMaxAge is how long a pooled iterator is reused at most.
var pointIterMaxAge = time.Second

// changed counts a change that point reads must see, and closes the idle
// iterators made before it. Call it after the change is visible in db.
func (p *pointIters) changed() {
	p.gen.Add(1)
	p.mu.Lock()
	stale := p.mu.free
	p.mu.free = nil
	p.mu.Unlock()
	closeAll(stale)
}

// take returns a pooled iterator that sees every change counted up to
// want, or nil when there is none (the caller then makes one). It closes
// the idle iterators that are too old for want or by age.
func (p *pointIters) take(want uint64) (*pointIter, error) {
	now := time.Now()
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	var found *pointIter
	keep := p.mu.free[:0]
	var stale []*pointIter
	for _, pi := range p.mu.free {
		switch {
		case pi.gen < want || now.Sub(pi.made) >= pointIterMaxAge:
			stale = append(stale, pi)
		case found == nil:
			found = pi
		default:
			keep = append(keep, pi)
		}
	}
	clear(p.mu.free[len(keep):])
	p.mu.free = keep
	if found != nil {
		p.inUse.Add(1)
	}
	p.mu.Unlock()
	closeAll(stale)
	return found, nil
}

// make returns a new iterator over db. The caller holds the store's visMu
// for reading, so that the iterator's view is not in the middle of an
// ingest.
func (p *pointIters) make(db *pebble.DB) (*pointIter, error) {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.inUse.Add(1)
	p.mu.Unlock()
	gen := p.gen.Load() // before the iterator: it sees every change up to gen
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		p.inUse.Done()
		return nil, fmt.Errorf("storage: point read iterator: %w", err)
	}
	return &pointIter{it: it, gen: gen, made: time.Now()}, nil
}

// put returns pi to the pool, or closes it when a change made it stale
// (or the store closed).
func (p *pointIters) put(pi *pointIter) {
	defer p.inUse.Done()
	p.mu.Lock()
	if !p.mu.closed && pi.gen == p.gen.Load() {
		p.mu.free = append(p.mu.free, pi)
		pi = nil
	}
	p.mu.Unlock()
	if pi != nil {
		_ = pi.it.Close()
	}
}

// close refuses new iterators, waits for those handed out to come back
// and closes them all (before the database closes).
func (p *pointIters) close() {
	p.mu.Lock()
	p.mu.closed = true
	p.mu.Unlock()
	p.inUse.Wait()
	p.mu.Lock()
	free := p.mu.free
	p.mu.free = nil
	p.mu.Unlock()
	closeAll(free)
}

func closeAll(its []*pointIter) {
	for _, pi := range its {
		_ = pi.it.Close()
	}
}

// seek positions it at key and returns key's value, valid until it moves.
func seek(it *pebble.Iterator, key []byte) ([]byte, bool, error) {
	if !it.SeekPrefixGE(key) || !bytes.Equal(it.Key(), key) {
		return nil, false, it.Error()
	}
	v, err := it.ValueAndErr()
	return v, err == nil, err
}

// seekRow reads the row of lay's table under key through it: the
// committed half of a point read through a kept iterator (LatestGet's
// pooled ones, a snapshot's own).
func seekRow(it *pebble.Iterator, lay *layout, key []byte) (types.Row, bool, error) {
	v, found, err := seek(it, key)
	if err == nil && found {
		var row types.Row
		if row, err = lay.decodeValue(v); err == nil {
			return row, true, nil
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("storage: table %d get: %w", lay.desc.ID, err)
	}
	return nil, false, nil
}
