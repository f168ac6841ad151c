package overwindow

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"github.com/sluice-db/sluice/internal/window"
)

// stateTable is what the executor needs of its state table.
type stateTable interface {
	Insert(row types.Row) error
	Delete(row types.Row) error
	Scan(ctx context.Context, prefix types.Row) (storage.Iterator, error)
	Seal(epoch uint64) error
}

// config holds the executor's tunables.
type config struct {
	chunkSize int
	// partitions bounds how many partitions are cached; rows bounds the
	// size of a partition kept cached after its chunk.
	partitions, rows int
}

// Executor maintains the window calls of plan.OverWindow (see doc.go).
type Executor struct {
	input  stream.Executor
	table  stateTable
	lay    *layout
	ev     *window.Evaluator
	schema []types.Type // output: input then one column per call

	back, fwd int64
	whole     bool

	cfg     config
	cache   *storage.LRU[string, *partition]
	pending stream.ChunkQueue
	chunker *stream.ChangeChunker
}

// Schema is the input's columns then the calls' values.
func (e *Executor) Schema() []types.Type { return e.schema }

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
			if err := e.table.Seal(msg.Barrier.Epoch); err != nil {
				return stream.Message{}, fmt.Errorf("overwindow: seal epoch %d: %w", msg.Barrier.Epoch, err)
			}
			return msg, nil
		default:
			// Watermarks are dropped (doc.go).
		}
	}
}

// touched is one partition's changes within a chunk.
type touched struct {
	key  string
	p    *partition
	gone map[string]types.Row // output rows of emitted rows removed
	keys []string             // sort keys inserted or removed
}

// outRow is one output change.
type outRow struct {
	op  types.Op
	row types.Row
}

func (e *Executor) handleChunk(ctx context.Context, c *types.Chunk) error {
	byKey := map[string]*touched{}
	var order []*touched
	for _, i := range c.VisibleIndices() {
		row := c.Row(i)
		prefix, pkey, err := e.lay.partition(row)
		if err != nil {
			return err
		}
		t, ok := byKey[pkey]
		if !ok {
			p, err := e.load(ctx, prefix, pkey)
			if err != nil {
				return err
			}
			t = &touched{key: pkey, p: p, gone: map[string]types.Row{}}
			byKey[pkey] = t
			order = append(order, t)
		}
		if err := e.apply(t, row, c.Op(i).IsInsert()); err != nil {
			return err
		}
	}
	var dels, ins []outRow
	for _, t := range order {
		var err error
		if dels, ins, err = e.diff(t, dels, ins); err != nil {
			return err
		}
		if t.p.Len() > e.cfg.rows {
			e.cache.Delete(t.key)
		}
	}
	e.queue(dels, ins)
	return nil
}

// load returns a partition from the cache or, with its values, from the
// table.
func (e *Executor) load(ctx context.Context, prefix types.Row, pkey string) (*partition, error) {
	if p, ok := e.cache.Get(pkey); ok {
		return p, nil
	}
	p := &partition{}
	it, err := e.table.Scan(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("overwindow: scan partition: %w", err)
	}
	for {
		row, ok, err := it.Next()
		if err == nil && ok {
			var en entry
			if en, err = e.lay.entry(row); err == nil {
				p.ents = append(p.ents, en)
				continue
			}
		}
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("overwindow: scan partition: %w", err)
		}
		break
	}
	vals, err := e.ev.Eval(p, 0, p.Len())
	if err != nil {
		return nil, err
	}
	for i := range p.ents {
		p.ents[i].vals = vals[i]
	}
	// Cached for the rest of the chunk even if the LRU evicts it: the
	// chunk's touched entry holds it.
	e.cache.Put(pkey, p)
	return p, nil
}

// apply writes one input row to the table and the cached partition.
func (e *Executor) apply(t *touched, row types.Row, insert bool) error {
	en, err := e.lay.entry(row)
	if err != nil {
		return err
	}
	t.keys = append(t.keys, en.key)
	var old entry
	var had bool
	if insert {
		if err := e.table.Insert(row); err != nil {
			return fmt.Errorf("overwindow: insert: %w", err)
		}
		old, had = t.p.insert(en)
	} else {
		if err := e.table.Delete(row); err != nil {
			return fmt.Errorf("overwindow: delete: %w", err)
		}
		old, had = t.p.remove(en.key)
	}
	if _, stashed := t.gone[en.key]; had && old.vals != nil && !stashed {
		t.gone[en.key] = output(old.row, old.vals)
	}
	return nil
}

func output(row, vals types.Row) types.Row {
	return append(slices.Clip(row), vals...)
}

// diff evaluates the rows the partition's changes can reach and appends
// what changed in the output.
func (e *Executor) diff(t *touched, dels, ins []outRow) ([]outRow, []outRow, error) {
	p := t.p
	if n := p.Len(); n > 0 {
		from, to := e.reach(t)
		vals, err := e.ev.Eval(p, from, to+1)
		if err != nil {
			return nil, nil, err
		}
		for i := from; i <= to; i++ {
			en := &p.ents[i]
			now := output(en.row, vals[i-from])
			was := t.gone[en.key]
			if en.vals != nil {
				was = output(en.row, en.vals)
			}
			delete(t.gone, en.key)
			switch {
			case was == nil:
				ins = append(ins, outRow{types.Insert, now})
			case !e.same(was, now):
				dels = append(dels, outRow{types.UpdateDelete, was}, outRow{types.UpdateInsert, now})
			}
			en.vals = vals[i-from]
		}
	}
	keys := make([]string, 0, len(t.gone))
	for k := range t.gone {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		dels = append(dels, outRow{types.Delete, t.gone[k]})
	}
	return dels, ins, nil
}

// reach returns the positions [from, to] whose values the chunk's
// changes can alter (window.Reach), widened to whole peer groups.
func (e *Executor) reach(t *touched) (from, to int) {
	p := t.p
	n := p.Len()
	if e.whole {
		return 0, n - 1
	}
	lo, hi := n, -1
	for _, k := range t.keys {
		i, _ := p.search(k)
		lo, hi = min(lo, i-1), max(hi, i)
	}
	// One row more on each side: a deleted row's peers sit just before
	// or just after the place it left.
	from, to = minus(lo, e.back)-1, plus(hi, e.fwd)+1
	from, to = max(from, 0), min(to, n-1)
	return p.peerStart(from), p.peerEnd(to)
}

// minus and plus move a position by a reach that may be unbounded.
func minus(i int, by int64) int {
	if by > int64(i) {
		return -1
	}
	return i - int(by)
}

func plus(i int, by int64) int {
	if by > 1<<40 {
		return 1 << 40
	}
	return i + int(by)
}

// same reports whether two output rows are identical to the byte, so an
// update outside the key (or 1.0 → 1.00) is still emitted.
func (e *Executor) same(a, b types.Row) bool {
	ea, err1 := codec.EncodeValue(nil, a, e.schema)
	eb, err2 := codec.EncodeValue(nil, b, e.schema)
	return err1 == nil && err2 == nil && bytes.Equal(ea, eb)
}

// queue turns the chunk's output into chunks: deletes and update pairs
// first, then inserts; a pair never straddles two chunks.
func (e *Executor) queue(dels, ins []outRow) {
	for _, rows := range [][]outRow{dels, ins} {
		for _, r := range rows {
			e.chunker.Add(&e.pending, r.op, r.row)
		}
	}
	e.chunker.Flush(&e.pending)
}
