package topn

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// stateTable is what the executor needs of a state table.
type stateTable interface {
	Insert(row types.Row) error
	Delete(row types.Row) error
	// ScanGroup returns up to limit rows whose PK starts with prefix, in PK
	// order, and whether they are all such rows.
	ScanGroup(ctx context.Context, prefix types.Row, limit int) ([]types.Row, bool, error)
	Seal(epoch uint64) error
}

// config holds the executor's tunables; Build derives them from the Env,
// tests set them directly to force tiny caches.
type config struct {
	chunkSize int
	// groups bounds how many groups' caches are kept.
	groups int
	// high is how many rows beyond the window a group's cache keeps.
	high int
}

// Executor is the streaming top-N. It applies each input chunk to the
// state table and the group caches and emits, right after that chunk, the
// changes to the output that the chunk caused (see doc.go).
type Executor struct {
	input  stream.Executor
	table  stateTable
	lay    *layout
	spec   spec
	cfg    config
	groups *storage.LRU[string, *groupCache]
	// pending holds output chunks of the last input chunk not yet returned.
	pending stream.ChunkQueue
	chunker *stream.ChangeChunker
}

func newExecutor(input stream.Executor, table stateTable, lay *layout, sp spec, cfg config) *Executor {
	e := &Executor{
		input:  input,
		table:  table,
		lay:    lay,
		spec:   sp,
		cfg:    cfg,
		groups: storage.NewLRU[string, *groupCache](max(cfg.groups, 1)),
	}
	e.chunker = stream.NewChangeChunker(e.Schema(), cfg.chunkSize)
	return e
}

// Schema is the input's schema (top-N passes rows through), then the
// rank with plan.TopN.Rank.
func (e *Executor) Schema() []types.Type {
	if e.spec.rank {
		return append(slices.Clip(e.lay.schema), types.TInt64)
	}
	return e.lay.schema
}

// Next returns the next output message.
func (e *Executor) Next(ctx context.Context) (stream.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return stream.Message{}, err
		}
		if c, ok := e.pending.Pop(); ok {
			return stream.ChunkMsg(c), nil
		}
		msg, err := e.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		switch {
		case msg.Chunk != nil:
			if err := e.handleChunk(ctx, msg.Chunk); err != nil {
				return stream.Message{}, err
			}
		case msg.Barrier != nil:
			// Output is emitted per chunk, so nothing is buffered here.
			if err := e.table.Seal(msg.Barrier.Epoch); err != nil {
				return stream.Message{}, fmt.Errorf("topn: seal epoch %d: %w", msg.Barrier.Epoch, err)
			}
			return msg, nil
		default:
			// A watermark is dropped: a delete can pull an old row (below
			// the watermark) back into the window, so it does not hold for
			// the output.
		}
	}
}

// handleChunk applies one input chunk and queues the resulting output.
func (e *Executor) handleChunk(ctx context.Context, c *types.Chunk) error {
	touched := make(map[string]*groupChunk)
	var order []*groupChunk
	for _, i := range c.VisibleIndices() {
		row := c.Row(i)
		prefix, gkey, err := e.lay.group(row)
		if err != nil {
			return err
		}
		g, ok := touched[gkey]
		if !ok {
			if g, err = e.beginGroup(ctx, prefix, gkey); err != nil {
				return err
			}
			touched[gkey] = g
			order = append(order, g)
		}
		if err := e.apply(g, row, c.Op(i).IsInsert()); err != nil {
			return err
		}
	}
	var dels, ins []outRow
	for _, g := range order {
		after, err := e.spec.windowOf(ctx, g.cache)
		if err != nil {
			return err
		}
		if e.spec.rank {
			dels, ins = rankDiff(g.ranked, windowRows(g.cache, after), int64(e.spec.offset)+1, e.lay.schema, dels, ins)
		} else if dels, ins, err = g.diff(ctx, after, e.lay.schema, dels, ins); err != nil {
			return err
		}
		if err := e.evict(g.cache, after); err != nil {
			return err
		}
		e.trim(g.cache, after)
	}
	e.queue(dels, ins)
	return nil
}

// beginGroup fetches (or loads) a group's cache and records its window
// before the chunk touches it.
func (e *Executor) beginGroup(ctx context.Context, prefix types.Row, gkey string) (*groupChunk, error) {
	c, ok := e.groups.Get(gkey)
	if !ok {
		c = &groupCache{load: e.loader(prefix)}
		// The group stays cached for the rest of the chunk even if the LRU
		// evicts it meanwhile: g holds it, and all its rows are in the table.
		e.groups.Put(gkey, c)
	}
	before, err := e.spec.windowOf(ctx, c)
	if err != nil {
		return nil, err
	}
	g := &groupChunk{prefix: prefix, cache: c, before: before, changed: make(map[string]*change)}
	if e.spec.rank {
		g.ranked = windowRows(c, before)
	}
	return g, nil
}

func (e *Executor) loader(prefix types.Row) loadFunc {
	return func(ctx context.Context, want int) ([]entry, bool, error) {
		rows, all, err := e.table.ScanGroup(ctx, prefix, want)
		if err != nil {
			return nil, false, fmt.Errorf("topn: scan group: %w", err)
		}
		out := make([]entry, len(rows))
		for i, r := range rows {
			if out[i], err = e.lay.entry(r); err != nil {
				return nil, false, err
			}
		}
		return out, all, nil
	}
}

// apply writes one input row to the table and the group's cache.
func (e *Executor) apply(g *groupChunk, row types.Row, insert bool) error {
	en, err := e.lay.entry(row)
	if err != nil {
		return err
	}
	if e.spec.appendOnly {
		if !insert {
			return errors.New("topn: a delete from an append-only input")
		}
		if e.spec.beyond(g.cache, en) {
			return nil
		}
	}
	g.note(en, insert)
	if insert {
		if err := e.table.Insert(row); err != nil {
			return fmt.Errorf("topn: insert: %w", err)
		}
		g.cache.insert(en)
		return nil
	}
	if err := e.table.Delete(row); err != nil {
		return fmt.Errorf("topn: delete: %w", err)
	}
	g.cache.remove(en.key)
	return nil
}

// trim bounds a group's cache: the low part and the window (all its peers
// too, so WITH TIES does not rescan a tie group every chunk) plus at most
// cfg.high rows beyond.
func (e *Executor) trim(c *groupCache, w window) {
	keep := e.spec.offset + 1
	if e.spec.limit >= 0 {
		keep = e.spec.end()
	}
	if !w.hi.inf {
		i, _ := c.search(w.hi.key)
		keep = max(keep, i+1)
	}
	if e.spec.appendOnly {
		c.trim(keep) // evict left nothing beyond the window worth keeping
		return
	}
	c.trim(keep + e.cfg.high)
}

// queue turns the chunk's output into chunks: every delete (and update
// pair) first, then every insert, so a row that moves between groups is
// removed downstream before it is added again.
func (e *Executor) queue(dels, ins []outRow) {
	for _, rows := range [][]outRow{dels, ins} {
		for _, r := range rows {
			e.chunker.Add(&e.pending, r.op, r.row)
		}
	}
	e.chunker.Flush(&e.pending)
}
