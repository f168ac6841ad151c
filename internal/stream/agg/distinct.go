package agg

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Distinct removes duplicate rows over its key columns: it counts each
// key's rows in its table (through an LRU cache of counts) and emits + when
// a key's count goes 0→1 and - when it goes 1→0. It emits per chunk, not
// per epoch, because its output per row is already minimal.
type Distinct struct {
	input   stream.Executor
	keys    []int
	schema  []types.Type
	table   *storage.StateTable
	cache   *storage.LRU[string, int64]
	builder *types.Builder
	queue   stream.ChunkQueue
	keyBuf  []byte
}

// NewDistinct returns a DISTINCT over node.Keys of input; its output is
// the key columns.
func NewDistinct(env *stream.Env, input stream.Executor, node *plan.Distinct) (*Distinct, error) {
	in := input.Schema()
	if len(node.Keys) == 0 {
		return nil, fmt.Errorf("agg: distinct without keys")
	}
	d := &Distinct{input: input, keys: node.Keys}
	for _, k := range node.Keys {
		if k < 0 || k >= len(in) {
			return nil, fmt.Errorf("agg: distinct key column %d out of range [0,%d)", k, len(in))
		}
		d.schema = append(d.schema, in[k])
	}
	t, err := openTable(env, &node.Table, DistinctLayout(in, node.Keys), len(node.Keys))
	if err != nil {
		return nil, fmt.Errorf("agg: distinct table: %w", err)
	}
	d.table = t
	d.cache = storage.NewLRU[string, int64](env.CacheOrDefault())
	d.builder = types.NewBuilder(d.schema, env.ChunkSizeOrDefault())
	return d, nil
}

// Schema returns the key columns' types.
func (d *Distinct) Schema() []types.Type { return d.schema }

// Next returns the distinct changes of each input chunk, then passes
// barriers on after sealing the table.
func (d *Distinct) Next(ctx context.Context) (stream.Message, error) {
	for {
		// Checked per output chunk: one large input chunk can queue many,
		// and popping them touches nothing that watches ctx.
		if err := ctx.Err(); err != nil {
			return stream.Message{}, err
		}
		if c, ok := d.queue.Pop(); ok {
			return stream.ChunkMsg(c), nil
		}
		msg, err := d.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		switch {
		case msg.Chunk != nil:
			if err := d.handleChunk(ctx, msg.Chunk); err != nil {
				return stream.Message{}, err
			}
		case msg.Barrier != nil:
			if err := d.table.Seal(msg.Barrier.Epoch); err != nil {
				return stream.Message{}, fmt.Errorf("agg: distinct seal: %w", err)
			}
			return msg, nil
		case msg.Watermark != nil:
			if w, ok := d.mapWatermark(msg.Watermark); ok {
				return stream.Message{Watermark: w}, nil
			}
		}
	}
}

// mapWatermark passes on a watermark on a key column, renumbered.
func (d *Distinct) mapWatermark(w *stream.Watermark) (*stream.Watermark, bool) {
	for j, k := range d.keys {
		if k == w.Col {
			return &stream.Watermark{Col: j, Value: w.Value}, true
		}
	}
	return nil, false
}

func (d *Distinct) handleChunk(ctx context.Context, c *types.Chunk) error {
	n := c.Capacity()
	for i := 0; i < n; i++ {
		if !c.Visible(i) {
			continue
		}
		key := d.keyOf(c, i)
		if d.isNoopUpdate(c, i, key) {
			i++ // the U+ half restores what the U- half removed
			continue
		}
		if err := d.applyRow(ctx, key, c.Op(i).IsInsert()); err != nil {
			return err
		}
	}
	d.queue.Push(d.builder.Take())
	return nil
}

func (d *Distinct) keyOf(c *types.Chunk, i int) types.Row {
	key := make(types.Row, len(d.keys))
	for j, k := range d.keys {
		key[j] = c.Cols[k].Get(i)
	}
	return key
}

// isNoopUpdate reports whether row i is the U- of an update pair whose U+
// has the same key.
func (d *Distinct) isNoopUpdate(c *types.Chunk, i int, key types.Row) bool {
	if c.Op(i) != types.UpdateDelete || i+1 >= c.Capacity() || !c.Visible(i+1) || c.Op(i+1) != types.UpdateInsert {
		return false
	}
	next := d.keyOf(c, i+1)
	for j := range key {
		if (key[j] == nil) != (next[j] == nil) || (key[j] != nil && types.Compare(key[j], next[j]) != 0) {
			return false
		}
	}
	return true
}

// applyRow adds or removes one row of key and emits a transition.
func (d *Distinct) applyRow(ctx context.Context, key types.Row, insert bool) error {
	kb, err := codec.EncodeKey(d.keyBuf[:0], key, d.schema, nil)
	if err != nil {
		return fmt.Errorf("agg: distinct key: %w", err)
	}
	d.keyBuf = kb
	k := string(kb)
	before, ok := d.cache.Get(k)
	if !ok {
		row, found, err := d.table.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("agg: distinct: %w", err)
		}
		if found {
			before, _ = row[len(key)].(int64)
		}
	}
	after := before - 1
	if insert {
		after = before + 1
	}
	after = max(after, 0) // a delete of an absent key is ignored
	d.cache.Put(k, after)
	if err := d.write(key, before, after); err != nil {
		return err
	}
	switch {
	case before == 0 && after > 0:
		d.emit(types.Insert, key)
	case before > 0 && after == 0:
		d.emit(types.Delete, key)
	}
	return nil
}

func (d *Distinct) write(key types.Row, before, after int64) error {
	if before == after {
		return nil
	}
	row := append(key[:len(key):len(key)], after)
	var err error
	if after > 0 {
		err = d.table.Insert(row)
	} else {
		err = d.table.Delete(row)
	}
	if err != nil {
		return fmt.Errorf("agg: distinct: %w", err)
	}
	return nil
}

func (d *Distinct) emit(op types.Op, key types.Row) {
	d.queue.Push(d.builder.Append(op, key))
}
