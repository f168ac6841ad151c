package source

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// ConnectorOffsetTable returns the shape a connector source's OffsetTable
// must have: one row per split, (split int, offset bigint), keyed by
// split. A row (s, o) means split s has emitted everything before offset
// o. The planner builds it with this function so both sides agree.
func ConnectorOffsetTable(id uint32) plan.Table {
	return plan.Table{ID: id, Types: []types.Type{types.TInt32, types.TInt64}, PK: []int{0}}
}

// pacedWaitMin is the shortest wait for a paced split's next row, so that
// a generator at thousands of rows a second wakes the actor for chunks,
// not for each row.
const pacedWaitMin = 10 * time.Millisecond

// ConnectorSource reads the splits of a connector assigned to its actor
// (split s goes to actor s mod parallelism) and interleaves the barriers
// of its inbox.
//
// Exactly once: on each barrier it writes, per split, the offset after
// the last row it returned, and seals them with the barrier's epoch; so
// the rows before barrier E are exactly the splits between the offsets
// sealed at the previous barrier and at E, and they commit together with
// everything derived from them. A rebuilt actor reopens each split at its
// committed offset. Readers never block (connector.Reader), so a barrier
// passes at once; a paused or rate-limited source waits for its tokens in
// the background, open to barriers and to ctx (an immediate drop).
type ConnectorSource struct {
	src       connector.Source
	schema    []types.Type
	barriers  <-chan *stream.Barrier
	throttle  *stream.Throttle
	chunkSize int
	offsets   *storage.StateTable
	owned     []int // split ids

	loaded  bool
	started bool
	splits  []*splitState
	next    int // the split to read first, round-robin
	// pending is a chunk read but not returned yet (waiting for throttle
	// tokens), from splits[pendingAt], which it moves to offset after.
	pending   *types.Chunk
	pendingAt int
	after     int64
	timer     *time.Timer
}

type splitState struct {
	id      int
	reader  connector.Reader
	emitted int64 // offset after the rows returned
	written int64 // offset in the offset table
	ready   connector.Ready
}

// NewConnectorSource builds the source of node cs with the given output
// schema. It reads nothing until the first Next.
func NewConnectorSource(env *stream.Env, cs *plan.ConnectorSource, schema []types.Type) (*ConnectorSource, error) {
	if env == nil || env.Store == nil || env.Barriers == nil {
		return nil, fmt.Errorf("source: connector source needs a store and a barrier inbox")
	}
	if err := checkShape(cs.OffsetTable, ConnectorOffsetTable(cs.OffsetTable.ID), "offset", "ConnectorOffsetTable"); err != nil {
		return nil, err
	}
	src, err := connector.Open(cs.Spec)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if want := cs.Spec.Schema(); !slices.Equal(want, schema) {
		return nil, fmt.Errorf("source: connector source schema %v, node says %v", want, schema)
	}
	if src.Splits() != cs.Splits {
		return nil, fmt.Errorf("source: the connector has %d splits, the plan %d", src.Splits(), cs.Splits)
	}
	par, idx := max(env.Parallelism, 1), env.Index
	if idx < 0 || idx >= par {
		return nil, fmt.Errorf("source: actor index %d of %d", idx, par)
	}
	var owned []int
	for s := idx; s < cs.Splits; s += par {
		owned = append(owned, s)
	}
	offsets, err := env.OpenTableAllVNodes(cs.OffsetTable)
	if err != nil {
		return nil, fmt.Errorf("source: open offset table: %w", err)
	}
	return &ConnectorSource{src: src, schema: schema, barriers: env.Barriers, throttle: env.Throttle,
		chunkSize: env.ChunkSizeOrDefault(), offsets: offsets, owned: owned}, nil
}

// Schema returns the source's column types.
func (s *ConnectorSource) Schema() []types.Type { return s.schema }

// ReadOnly tells the source which of its columns the executors above read
// (nil: all); a connector that can skips making the others
// (connector.Narrower).
func (s *ConnectorSource) ReadOnly(read []bool) error {
	if read != nil && len(read) != len(s.schema) {
		return fmt.Errorf("source: connector source of %d columns given a read mask of %d", len(s.schema), len(read))
	}
	if n, ok := s.src.(connector.Narrower); ok {
		n.ReadOnly(read)
	}
	return nil
}

// Next returns a barrier waiting in the inbox, else the next chunk of a
// split once the throttle lets it pass; otherwise it blocks until a
// barrier arrives, a split has rows, or ctx ends.
func (s *ConnectorSource) Next(ctx context.Context) (stream.Message, error) {
	if err := s.maybeLoad(ctx); err != nil {
		return stream.Message{}, err
	}
	if !s.started {
		select {
		case b, ok := <-s.barriers:
			return s.handleBarrier(b, ok)
		case <-ctx.Done():
			return stream.Message{}, ctx.Err()
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return stream.Message{}, err
		}
		select {
		case b, ok := <-s.barriers:
			return s.handleBarrier(b, ok)
		default:
		}
		if s.pending == nil {
			if err := s.fill(); err != nil {
				return stream.Message{}, err
			}
		}
		if s.pending != nil && s.throttleOpen() {
			return s.emit(), nil
		}
		msg, done, err := s.block(ctx)
		if err != nil || done {
			return msg, err
		}
	}
}

func (s *ConnectorSource) maybeLoad(ctx context.Context) error {
	if s.loaded {
		return nil
	}
	for _, id := range s.owned {
		off, err := readOffset(ctx, s.offsets, id)
		if err != nil {
			return err
		}
		r, err := s.src.Open(id, off)
		if err != nil {
			return fmt.Errorf("source: open split %d at offset %d: %w", id, off, err)
		}
		s.splits = append(s.splits, &splitState{id: id, reader: r, emitted: off, written: off})
	}
	s.loaded = true
	return nil
}

func readOffset(ctx context.Context, t *storage.StateTable, split int) (int64, error) {
	row, ok, err := t.Get(ctx, types.Row{int64(split)})
	if err != nil || !ok {
		return 0, err
	}
	off, ok := row[1].(int64)
	if !ok || off < 0 {
		return 0, fmt.Errorf("source: malformed connector offset row %v", row)
	}
	return off, nil
}

// fill reads the next chunk from the first split, round-robin, that has
// rows ready.
func (s *ConnectorSource) fill() error {
	now := time.Now()
	for range s.splits {
		i := s.next
		s.next = (s.next + 1) % len(s.splits)
		sp := s.splits[i]
		if sp.ready.Done || sp.ready.At.After(now) {
			continue
		}
		c, off, ready, err := sp.reader.Read(s.chunkSize)
		if err != nil {
			return fmt.Errorf("source: read split %d: %w", sp.id, err)
		}
		sp.ready = ready
		if c != nil {
			s.pending, s.pendingAt, s.after = c, i, off
			return nil
		}
		// No rows, but the split may have moved past positions that hold
		// none (a Person source skips the bids): the offset is good to
		// record, or a bounded split would never be seen to reach its end.
		sp.emitted = off
	}
	return nil
}

func (s *ConnectorSource) emit() stream.Message {
	s.splits[s.pendingAt].emitted = s.after
	c := s.pending
	s.pending = nil
	return stream.ChunkMsg(c)
}

func (s *ConnectorSource) throttleOpen() bool {
	if s.throttle == nil {
		return true
	}
	paused, limit := s.throttle.State()
	return !paused && limit < 0
}

// block waits for throttle tokens for the pending chunk, or for the
// earliest split to have rows, while staying open to barriers. done
// reports that msg is the message to return.
func (s *ConnectorSource) block(ctx context.Context) (msg stream.Message, done bool, err error) {
	var bg *background
	var tick <-chan time.Time
	if s.pending != nil {
		rows := s.pending.Cardinality()
		bg = startBackground(ctx, "connector-source-throttle", func(ctx context.Context) error {
			return s.throttle.Wait(ctx, rows)
		})
	} else if at, ok := s.earliest(); ok {
		wait := max(time.Until(at), 0)
		if !at.IsZero() {
			wait = max(wait, pacedWaitMin)
		}
		s.timer = resetTimer(s.timer, wait)
		tick = s.timer.C
	}
	select {
	case <-bg.doneChan():
		if err := bg.result(); err != nil {
			return stream.Message{}, true, err
		}
		return s.emit(), true, nil
	case <-tick:
		return stream.Message{}, false, nil
	case b, ok := <-s.barriers:
		bg.stop()
		msg, err := s.handleBarrier(b, ok)
		return msg, true, err
	case <-ctx.Done():
		bg.stop()
		return stream.Message{}, true, ctx.Err()
	}
}

// earliest returns when the first split not exhausted may have rows (the
// zero time: now); ok is false when every split is exhausted.
func (s *ConnectorSource) earliest() (at time.Time, ok bool) {
	for _, sp := range s.splits {
		if sp.ready.Done {
			continue
		}
		if !ok || sp.ready.At.Before(at) {
			at, ok = sp.ready.At, true
		}
	}
	return at, ok
}

func resetTimer(t *time.Timer, d time.Duration) *time.Timer {
	if t == nil {
		return time.NewTimer(d)
	}
	t.Reset(d)
	return t
}

// handleBarrier writes the offset of every split that moved, seals the
// offset table with the barrier's epoch and returns the barrier.
func (s *ConnectorSource) handleBarrier(b *stream.Barrier, ok bool) (stream.Message, error) {
	if !ok {
		return stream.Message{}, ErrInboxClosed
	}
	if b == nil {
		return stream.Message{}, fmt.Errorf("source: nil barrier in a connector source's inbox")
	}
	s.started = true
	for _, sp := range s.splits {
		if sp.emitted == sp.written {
			continue
		}
		if err := s.offsets.Insert(types.Row{int64(sp.id), sp.emitted}); err != nil {
			return stream.Message{}, fmt.Errorf("source: write offset of split %d: %w", sp.id, err)
		}
		sp.written = sp.emitted
	}
	if err := s.offsets.Seal(b.Epoch); err != nil {
		return stream.Message{}, fmt.Errorf("source: seal connector offsets at epoch %d: %w", b.Epoch, err)
	}
	return stream.BarrierMsg(b), nil
}
