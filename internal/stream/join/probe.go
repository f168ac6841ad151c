package join

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// candidates yields the other side's rows stored under a probe's join key,
// a batch at a time, so a probe can stop between batches and resume on the
// next Next call.
type candidates interface {
	// next returns up to max rows, which may be reused by the next call;
	// an empty result means the end.
	next(max int) ([]*storedRow, error)
	close()
}

// cachedCandidates walks a cache entry. The entry's row slice is not
// changed while a probe holds it: only the probed side's degrees change
// during a probe, in place, and rows are inserted or removed only on the
// probing side.
type cachedCandidates struct {
	rows []*storedRow
}

func (c *cachedCandidates) next(max int) ([]*storedRow, error) {
	n := min(max, len(c.rows))
	out := c.rows[:n]
	c.rows = c.rows[n:]
	return out, nil
}

func (c *cachedCandidates) close() {}

// storeCandidates streams a large key's rows from the state table, so its
// rows are never all in memory at once. A batch's rows live in rows,
// reused by the next batch: a probe is done with a batch before it asks
// for the next (Nexmark q5 streams every row of a window each time its
// maximum moves, and a row of its own for each was a twentieth of what
// the query allocated).
type storeCandidates struct {
	it   rowIterator
	buf  []*storedRow
	rows []storedRow
}

func (c *storeCandidates) next(max int) ([]*storedRow, error) {
	c.buf, c.rows = c.buf[:0], c.rows[:0]
	for len(c.rows) < max {
		row, ok, err := c.it.Next()
		if err != nil {
			return nil, fmt.Errorf("join: scan large key: %w", err)
		}
		if !ok {
			break
		}
		c.rows = append(c.rows, storedRow{row: row, degree: -1})
	}
	for i := range c.rows {
		c.buf = append(c.buf, &c.rows[i])
	}
	return c.buf, nil
}

func (c *storeCandidates) close() { c.it.Close() }

// emptyCandidates is the probe of a key that can match nothing.
type emptyCandidates struct{}

func (emptyCandidates) next(int) ([]*storedRow, error) { return nil, nil }
func (emptyCandidates) close()                         {}

// rowTask is the processing of one input row: probe the other side, apply
// each match, then update the row's own side. It survives across Next
// calls so that a row matching millions of rows is emitted chunk by chunk.
type rowTask struct {
	side      int // the input the row came from
	insert    bool
	row       types.Row
	key       types.Row
	keyOK     bool
	count     int64 // matches so far (pairs that passed the residual)
	src       candidates
	cached    cachedCandidates // src when the key is cached, to save an allocation
	batch     []*storedRow
	pass      []bool // residual result per batch row; nil = all pass
	pos       int
	srcEnded  bool
	reported  int64 // the matches last reported as running long (amp.go)
	overLimit bool  // the guard heard of this row (amp.go)
	// taken counts the candidates fetched, the batch in hand included;
	// seq is the row's sequence number in the pending table, or -1
	// (overtake.go).
	taken int64
	seq   int64
	since types.DTimestamptz // the last barrier before its row came
}

// openCandidates starts the probe of t's key against side s: it sets t.src.
func (s *side) openCandidates(ctx context.Context, t *rowTask) error {
	if !t.keyOK {
		t.src = emptyCandidates{}
		return nil
	}
	s.probes++
	if s.uncached { // every key is streamed (adapt.go)
		return s.streamCandidates(ctx, t)
	}
	e, err := s.entry(ctx, t.key)
	if err != nil {
		return err
	}
	if e.large {
		return s.streamCandidates(ctx, t)
	}
	e.forProbe()
	t.cached = cachedCandidates{rows: e.rows}
	t.src = &t.cached
	return nil
}

// streamCandidates sets t.src to stream t's key's rows from the state
// table.
func (s *side) streamCandidates(ctx context.Context, t *rowTask) error {
	it, err := s.rows.Scan(ctx, t.key)
	if err != nil {
		return fmt.Errorf("join: scan large key: %w", err)
	}
	s.streamed.it = it
	t.src = &s.streamed
	return nil
}
