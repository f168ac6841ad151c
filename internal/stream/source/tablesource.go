package source

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// ErrInboxClosed is returned when a source's barrier inbox closes: the
// compute node is tearing the actor down without a stop barrier.
var ErrInboxClosed = errors.New("source: barrier inbox closed")

// split is the offset-table key of the one actor that reads a table's whole
// log. A later design may split a log by seq across actors, one row each.
const split int64 = 0

// TableSource tails one table's durable DML log and interleaves the
// barriers of its actor's inbox. See doc.go for the flow and the
// exactly-once argument.
type TableSource struct {
	store     *storage.Store
	tableID   uint32
	schema    []types.Type
	barriers  <-chan *stream.Barrier
	throttle  *stream.Throttle
	chunkSize int
	offsets   *storage.StateTable

	loaded  bool
	started bool       // the first barrier has been returned
	emitted logPos     // after every row returned so far
	written logPos     // last position written to the offset table
	reader  *logReader // runs at most one chunk ahead of emitted
	pending *types.Chunk
	// pendingFresh is pending's place when the rows are a fresh run kept
	// encoded (stream.FreshRows: plan.TableSource.FreshRows).
	pendingFresh *stream.FreshRows
	emitFresh    bool
	after        logPos // emitted becomes after once pending is returned
	// held is a barrier waiting for the log records that were durable when
	// it arrived (through seq target) to be emitted before it.
	held   *stream.Barrier
	target uint64
	// lingerFor is how long a small chunk makes the source linger
	// (tablesource_linger.go), lingerUntil when that linger ends, and
	// lingerTimer times it.
	lingerFor   time.Duration
	lingerUntil time.Time
	lingerTimer *time.Timer
	// actor and gens are what staging a bulk load's file presents; loads
	// are the files emitted since the last barrier, staged with it
	// (tablesource_load.go).
	actor stream.ActorID
	gens  storage.TableGens
	loads []*storage.LoadedFile
}

// NewTableSource builds the source of node ts with the given output schema
// (the table's columns). It reads nothing until the first Next.
func NewTableSource(env *stream.Env, ts *plan.TableSource, schema []types.Type) (*TableSource, error) {
	if env == nil || env.Store == nil {
		return nil, fmt.Errorf("source: table source needs a store")
	}
	if env.Barriers == nil {
		return nil, fmt.Errorf("source: table source of table %d needs a barrier inbox", ts.TableID)
	}
	if len(schema) == 0 {
		return nil, fmt.Errorf("source: table source of table %d has no columns", ts.TableID)
	}
	if err := checkOffsetTable(ts.OffsetTable); err != nil {
		return nil, err
	}
	// The offset rows are keyed by split, not by the table's vnodes, so the
	// table is opened over all vnodes.
	offsets, err := env.OpenTableAllVNodes(ts.OffsetTable)
	if err != nil {
		return nil, fmt.Errorf("source: open offset table: %w", err)
	}
	// Open the log now, so that the barrier that starts this source
	// carries the table in its DML horizon.
	if _, err := env.Store.LastDML(ts.TableID); err != nil {
		return nil, fmt.Errorf("source: open dml log of table %d: %w", ts.TableID, err)
	}
	return &TableSource{
		store: env.Store, tableID: ts.TableID, schema: schema,
		barriers: env.Barriers, throttle: env.Throttle,
		chunkSize: env.ChunkSizeOrDefault(), offsets: offsets, emitFresh: ts.FreshRows,
		lingerFor: lingerFor, actor: env.ActorID, gens: env.Store.TableGens(ts.TableID),
	}, nil
}

// Schema returns the table's column types.
func (s *TableSource) Schema() []types.Type { return s.schema }

// Next returns, in order of priority: a barrier waiting in the inbox; the
// next chunk of the log once the throttle lets it pass; otherwise it blocks
// until a barrier arrives, the log grows, or ctx ends.
func (s *TableSource) Next(ctx context.Context) (stream.Message, error) {
	if err := s.maybeLoad(ctx); err != nil {
		return stream.Message{}, err
	}
	if !s.started {
		// The first message of a stream is a barrier: no data may precede
		// the epoch the actor starts in.
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
		if s.held != nil {
			if msg, done, err := s.drainHeld(ctx); err != nil || done {
				return msg, err
			}
			continue
		}
		select {
		case b, ok := <-s.barriers:
			if msg, done, err := s.holdBarrier(b, ok); err != nil || done {
				return msg, err
			}
			continue
		default:
		}
		if !s.hasPending() {
			if msg, done, err := s.linger(ctx); err != nil || done {
				return msg, err
			}
			if s.held != nil {
				continue
			}
			if err := s.fill(); err != nil {
				return stream.Message{}, err
			}
		}
		if s.hasPending() && s.throttleOpen() {
			return s.emit(), nil
		}
		if s.pendingLoad() {
			s.unfillLoad()
			continue
		}
		msg, done, err := s.block(ctx)
		if err != nil || done {
			return msg, err
		}
	}
}

func (s *TableSource) maybeLoad(ctx context.Context) error {
	if s.loaded {
		return nil
	}
	p, err := readLogPos(ctx, s.offsets, split)
	if err != nil {
		return fmt.Errorf("source: read offset of table %d: %w", s.tableID, err)
	}
	s.emitted, s.written = p, p
	s.reader = newLogReader(s.store, s.tableID, s.schema, p)
	s.reader.freshApart = s.emitFresh
	s.loaded = true
	return nil
}

// fill cuts the next chunk from the log, if there is one: a fresh run's
// rows still encoded, or a bulk load's file, when the plan asks for them
// (emitFresh) and nothing throttles the source (a rate limit counts rows
// in chunks of chunkSize).
func (s *TableSource) fill() error {
	if s.emitFresh && s.throttleOpen() {
		f, after, err := s.reader.takeFresh(decodeWindow)
		if err != nil {
			return err
		}
		if f != nil {
			s.pendingFresh, s.after = f, after
			return nil
		}
		// takeFresh stops at a load record it opens: take its file.
		if ok, err := s.fillLoad(); err != nil || ok {
			return err
		}
	}
	c, after, err := s.reader.take(s.chunkSize)
	if err != nil || c == nil {
		return err
	}
	s.pending, s.after = c, after
	return nil
}

func (s *TableSource) hasPending() bool { return s.pending != nil || s.pendingFresh != nil }

// pendingRows is the number of rows pending.
func (s *TableSource) pendingRows() int {
	if s.pendingFresh != nil {
		return s.pendingFresh.Len()
	}
	return s.pending.Cardinality()
}

// emit returns the pending rows.
func (s *TableSource) emit() stream.Message {
	s.noteEmitted(s.pendingRows())
	if f := s.pendingFresh; f != nil && f.Loaded != nil {
		s.loads = append(s.loads, f.Loaded)
	}
	msg := stream.Message{Chunk: s.pending, Fresh: s.pendingFresh}
	s.pending, s.pendingFresh, s.emitted = nil, nil, s.after
	return msg
}

// throttleOpen reports whether a chunk may pass without waiting: the fast
// path that needs no goroutine.
func (s *TableSource) throttleOpen() bool {
	if s.throttle == nil {
		return true
	}
	paused, limit := s.throttle.State()
	return !paused && limit < 0
}

// block waits for whatever the source lacks — throttle tokens for the
// pending chunk, or new log records — while staying open to barriers. done
// reports that msg is the message to return.
func (s *TableSource) block(ctx context.Context) (msg stream.Message, done bool, err error) {
	var bg *background
	if s.hasPending() {
		rows := s.pendingRows()
		bg = startBackground(ctx, "table-source-throttle", func(ctx context.Context) error {
			return s.throttle.Wait(ctx, rows)
		})
	} else {
		after := s.reader.fetched
		bg = startBackground(ctx, "table-source-wait-dml", func(ctx context.Context) error {
			return s.store.WaitDML(ctx, s.tableID, after)
		})
	}
	select {
	case <-bg.done:
		if err := bg.result(); err != nil {
			return stream.Message{}, true, err
		}
		if s.hasPending() {
			// The tokens are spent: the chunk passes now, even if a barrier
			// arrived meanwhile (the next Next returns it).
			return s.emit(), true, nil
		}
		return stream.Message{}, false, nil
	case b, ok := <-s.barriers:
		// Stopping cancels the throttle reservation, so the pending chunk
		// waits afresh after the barrier and is not charged twice.
		bg.stop()
		return s.holdBarrier(b, ok)
	case <-ctx.Done():
		bg.stop()
		return stream.Message{}, true, ctx.Err()
	}
}

// holdBarrier takes a barrier from the inbox. Every write acknowledged
// before the barrier was injected must be in its epoch — that is what makes
// FLUSH (and implicit_flush) read-your-writes — so unless the source is
// paused or rate limited, the barrier waits until the log records durable
// at its arrival are emitted. done reports that msg is to be returned.
func (s *TableSource) holdBarrier(b *stream.Barrier, ok bool) (msg stream.Message, done bool, err error) {
	if !ok || b == nil || !s.throttleOpen() {
		msg, err = s.handleBarrier(b, ok)
		return msg, true, err
	}
	target, err := s.store.LastDML(s.tableID)
	if err != nil {
		return stream.Message{}, true, fmt.Errorf("source: last dml of table %d: %w", s.tableID, err)
	}
	if h := s.gateOf(b); h != math.MaxUint64 {
		// The records enqueued before the barrier's injection, gated ones
		// included, belong to its epoch (storage/dml_gate.go).
		s.reader.gateLimit, target = h, max(target, h)
	}
	if s.emitted.seq >= target {
		msg, err = s.handleBarrier(b, ok)
		return msg, true, err
	}
	s.held, s.target = b, target
	return stream.Message{}, false, nil
}

// drainHeld emits the next chunk owed before the held barrier, or the
// barrier once nothing is owed (or the source has been paused meanwhile:
// a paused source must never hold up a checkpoint).
func (s *TableSource) drainHeld(ctx context.Context) (stream.Message, bool, error) {
	if s.emitted.seq < s.target && s.throttleOpen() {
		if !s.hasPending() {
			if err := s.fill(); err != nil {
				return stream.Message{}, true, err
			}
		}
		if s.hasPending() {
			return s.emit(), true, nil
		}
		if !s.reader.atGate && s.reader.fetched < s.target {
			// Enqueued before the barrier, not synced yet: its sync is
			// under way, so the wait is short.
			if err := s.store.WaitDMLDurable(ctx, s.tableID, s.target); err != nil {
				return stream.Message{}, true, err
			}
			if d, err := s.store.LastDML(s.tableID); err != nil || d < s.target {
				s.target = d // the log was dropped meanwhile: owe nothing more
				return stream.Message{}, err != nil, err
			}
			return stream.Message{}, false, nil
		}
	}
	b := s.held
	s.held = nil
	msg, err := s.handleBarrier(b, true)
	return msg, true, err
}

// handleBarrier records the log position reached — exactly the rows
// returned before this barrier — in the offset table, seals it with the
// barrier's epoch and returns the barrier.
func (s *TableSource) handleBarrier(b *stream.Barrier, ok bool) (stream.Message, error) {
	if !ok {
		return stream.Message{}, ErrInboxClosed
	}
	if b == nil {
		return stream.Message{}, fmt.Errorf("source: nil barrier in inbox of table %d", s.tableID)
	}
	s.started = true
	if s.emitted != s.written {
		if err := writeLogPos(s.offsets, split, s.emitted); err != nil {
			return stream.Message{}, fmt.Errorf("source: write offset of table %d: %w", s.tableID, err)
		}
		s.written = s.emitted
	}
	// The loads first: the position past them is staged only with them.
	if err := s.stageLoads(b.Epoch); err != nil {
		return stream.Message{}, err
	}
	if err := s.offsets.Seal(b.Epoch); err != nil {
		return stream.Message{}, fmt.Errorf("source: seal offset of table %d at epoch %d: %w", s.tableID, b.Epoch, err)
	}
	// Gated records past the horizon wait for the barrier that covers them.
	s.reader.gateLimit = s.gateOf(b)
	return stream.BarrierMsg(b), nil
}

// gateOf is the highest gated record of this table barrier b's epoch may
// hold: its DML horizon, or no limit for a barrier that carries none.
func (s *TableSource) gateOf(b *stream.Barrier) uint64 {
	if b.DMLHorizon == nil {
		return math.MaxUint64
	}
	return b.DMLHorizon[s.tableID]
}
