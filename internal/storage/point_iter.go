package storage

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
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
// the changes a point read must see (a commit, a dropped table): an
// iterator made at gen g sees every change counted up to g, so a reader
// that needs the changes up to want takes one whose gen ≥ want. Older
// iterators are closed when they come back, or at the next change if
// they are idle. One is also not reused past pointIterMaxAge, so that
// while barriers are stuck (no commit for minutes) the pool does not pin
// the memtables and files of the minute they stopped.
type pointIters struct {
	gen atomic.Uint64
	mu  struct {
		sync.Mutex
		free   []*pointIter
		closed bool
	}
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
	for _, pi := range stale {
		_ = pi.it.Close()
	}
}

// get returns an iterator that sees every change counted up to want.
func (p *pointIters) get(db *pebble.DB, want uint64) (*pointIter, error) {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	var stale []*pointIter
	for n := len(p.mu.free); n > 0; n = len(p.mu.free) {
		pi := p.mu.free[n-1]
		p.mu.free = p.mu.free[:n-1]
		if pi.gen >= want && time.Since(pi.made) < pointIterMaxAge {
			p.mu.Unlock()
			closeAll(stale)
			return pi, nil
		}
		stale = append(stale, pi)
	}
	p.mu.Unlock()
	closeAll(stale)
	gen := p.gen.Load() // before the iterator: it sees every change up to gen
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return nil, fmt.Errorf("storage: point read iterator: %w", err)
	}
	return &pointIter{it: it, gen: gen, made: time.Now()}, nil
}

// put returns pi to the pool, or closes it when a change made it stale
// (or the store closed).
func (p *pointIters) put(pi *pointIter) {
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

// close closes the idle iterators and refuses new ones (before the
// database closes).
func (p *pointIters) close() {
	p.mu.Lock()
	p.mu.closed = true
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

// read looks key up and, when it is present, hands its value to use
// (valid only during the call).
func (pi *pointIter) read(key []byte, use func(v []byte) error) (bool, error) {
	if !pi.it.SeekPrefixGE(key) || !bytes.Equal(pi.it.Key(), key) {
		return false, pi.it.Error()
	}
	v, err := pi.it.ValueAndErr()
	if err != nil {
		return false, err
	}
	return true, use(v)
}
