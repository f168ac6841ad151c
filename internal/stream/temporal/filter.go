package temporal

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// Filter runs plan.TemporalFilter; see doc.go.
type Filter struct {
	input  stream.Executor
	col    int
	op     string
	bound  expr.Expr
	ectx   *expr.Context
	table  *storage.StateTable
	schema []types.Type
	chunk  int

	// cur is the bound as of the last barrier (valid once has is set),
	// as the column's int64 value: a row passes when col op cur.
	cur int64
	has bool
	// nullBound: the last bound was NULL, and no row passes or is kept.
	nullBound bool
	// out holds the rows a moved bound releases, emitted before the
	// barrier that moved it.
	out     []*types.Chunk
	barrier *stream.Barrier
	// releasedTo is the end of the last release (valid when released).
	releasedTo int64
	released   bool
}

// expiring reports whether rows leave as the bound rises (> and >=);
// otherwise they arrive (< and <=).
func (f *Filter) expiring() bool { return f.op == ">" || f.op == ">=" }

// NewFilter builds the temporal filter of n over input.
func NewFilter(env *stream.Env, n *plan.Node, input stream.Executor) (*Filter, error) {
	tf := n.TemporalFilter
	if tf == nil {
		return nil, fmt.Errorf("temporal: temporal_filter node without TemporalFilter")
	}
	in := input.Schema()
	if tf.Col < 0 || tf.Col >= len(in) || (in[tf.Col].ID != types.Timestamp && in[tf.Col].ID != types.Timestamptz) {
		return nil, fmt.Errorf("temporal: filter column %d of %v", tf.Col, in)
	}
	if !slices.Contains([]string{">", ">=", "<", "<="}, tf.Op) {
		return nil, fmt.Errorf("temporal: operator %q", tf.Op)
	}
	bound, err := expr.Build(tf.Bound, nil)
	if err != nil {
		return nil, fmt.Errorf("temporal: bound: %w", err)
	}
	if bound.Type() != in[tf.Col] {
		return nil, fmt.Errorf("temporal: bound is %s, the column %s", bound.Type(), in[tf.Col])
	}
	want := plan.TemporalFilterTable(tf.Table.ID, in, tf.Col, tf.Table.DistKey)
	if !slices.Equal(tf.Table.Types, want.Types) || !slices.Equal(tf.Table.PK, want.PK) {
		return nil, fmt.Errorf("temporal: table %d is %v pk %v; want %v pk %v", tf.Table.ID, tf.Table.Types, tf.Table.PK, want.Types, want.PK)
	}
	t, err := env.OpenTable(tf.Table)
	if err != nil {
		return nil, fmt.Errorf("temporal: open table: %w", err)
	}
	ectx := &expr.Context{}
	if env.Expr != nil {
		ectx.Location = env.Expr.Location
	}
	return &Filter{input: input, col: tf.Col, op: tf.Op, bound: bound, ectx: ectx, table: t, schema: in,
		chunk: env.ChunkSizeOrDefault()}, nil
}

// Schema returns the input's schema.
func (f *Filter) Schema() []types.Type { return f.schema }

// Next passes each input row that is on the kept side of the bound (and
// keeps in the table those that may cross it later); after a barrier it
// moves the bound to the barrier's time and emits the rows that crossed
// it. Watermarks are dropped: expiring rows go out as deletes of old
// rows, and arriving ones are old rows too.
func (f *Filter) Next(ctx context.Context) (stream.Message, error) {
	for {
		if len(f.out) > 0 {
			c := f.out[0]
			f.out = f.out[1:]
			return stream.ChunkMsg(c), nil
		}
		if b := f.barrier; b != nil {
			// The bound moves right after the barrier: the rows it
			// releases (and their deletion from the table) belong to the
			// epoch the barrier opens, and nothing precedes a first
			// barrier.
			f.barrier = nil
			if err := f.advance(ctx, b); err != nil {
				return stream.Message{}, err
			}
			continue
		}
		msg, err := f.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		switch {
		case msg.Chunk != nil:
			c, err := f.filter(msg.Chunk)
			if err != nil || c != nil {
				return stream.ChunkMsg(c), err
			}
		case msg.Barrier != nil:
			if err := f.table.Seal(msg.Barrier.Epoch); err != nil {
				return stream.Message{}, fmt.Errorf("temporal: seal: %w", err)
			}
			f.barrier = msg.Barrier
			return msg, nil
		case msg.Fresh != nil:
			return stream.Message{}, fmt.Errorf("temporal: fresh rows reached a temporal filter")
		}
	}
}

// passes reports whether a row whose column is v is on the kept side.
func (f *Filter) passes(v int64) bool {
	switch f.op {
	case ">":
		return v > f.cur
	case ">=":
		return v >= f.cur
	case "<":
		return v < f.cur
	}
	return v <= f.cur
}

// filter returns c's rows that pass, as inserts and deletes (update
// pairs split: their halves may fall on different sides), and stores or
// removes the rows that may cross the bound later. NULL times never pass.
func (f *Filter) filter(c *types.Chunk) (*types.Chunk, error) {
	if !f.has {
		return nil, fmt.Errorf("temporal: rows before the first barrier")
	}
	if f.nullBound {
		return nil, nil
	}
	b := types.NewUnboundedBuilder(f.schema)
	col := c.Cols[f.col]
	for i := range c.Capacity() {
		if !c.Visible(i) || col.IsNull(i) {
			continue
		}
		v := micros(col.Get(i))
		insert := c.Op(i).IsInsert()
		pass := f.passes(v)
		// Rows that can still cross: passing an expiring bound, or not
		// yet passing an arriving one.
		if pass == f.expiring() {
			row := c.Row(i)
			var err error
			if insert {
				err = f.table.Insert(row)
			} else {
				err = f.table.Delete(row)
			}
			if err != nil {
				return nil, fmt.Errorf("temporal: state: %w", err)
			}
		}
		if pass {
			op := types.Insert
			if !insert {
				op = types.Delete
			}
			b.Append(op, c.Row(i))
		}
	}
	return b.Take(), nil
}

// advance moves the bound to b's time and queues the rows that crossed
// it: deletes of expired rows, inserts of arrived ones, each removed
// from the table.
func (f *Filter) advance(ctx context.Context, b *stream.Barrier) error {
	f.ectx.Now = b.Time
	v, err := f.bound.Eval(f.ectx, types.NewChunk([]types.Column{types.ColumnOf(types.TInt64, int64(0))}, nil))
	if err != nil {
		return fmt.Errorf("temporal: bound: %w", err)
	}
	d := v.Get(0)
	if d == nil {
		// A NULL bound (or one whose computation failed) keeps no row,
		// as a comparison with NULL does.
		f.nullBound, f.has = true, true
		return nil
	}
	next := micros(d)
	if f.has && !f.nullBound && next <= f.cur {
		return nil // time does not go back
	}
	f.cur, f.has, f.nullBound = next, true, false
	// The rows crossing are the stored ones below the bound, and at it
	// for > (it expires) and <= (it arrives). After a restart the table
	// holds what the last committed epoch kept, so the first barrier
	// releases what crossed meanwhile.
	end := next
	if f.op == ">" || f.op == "<=" {
		end++
	}
	return f.release(ctx, end)
}

// release emits and deletes the stored rows below end.
func (f *Filter) release(ctx context.Context, end int64) (err error) {
	// Rows below the last release's end are never stored again (they
	// pass or are dropped on arrival): start there, past its tombstones.
	var from types.Datum
	if f.released {
		from = datumOf(f.releasedTo, f.schema[f.col])
	}
	it, err := f.table.ScanBetween(ctx, from, datumOf(end, f.schema[f.col]))
	if err != nil {
		return fmt.Errorf("temporal: scan: %w", err)
	}
	var rows []types.Row
	for {
		row, ok, err := it.Next()
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("temporal: scan: %w", err)
		}
		if !ok {
			break
		}
		rows = append(rows, row)
	}
	if err := it.Close(); err != nil {
		return err
	}
	op := types.Insert
	if f.expiring() {
		op = types.Delete
	}
	bld := types.NewBuilder(f.schema, f.chunk)
	for _, row := range rows {
		if err := f.table.Delete(row); err != nil {
			return fmt.Errorf("temporal: state: %w", err)
		}
		if c := bld.Append(op, row); c != nil {
			f.out = append(f.out, c)
		}
	}
	if c := bld.Take(); c != nil {
		f.out = append(f.out, c)
	}
	f.releasedTo, f.released = end, true
	return nil
}

func micros(d types.Datum) int64 {
	if t, ok := d.(types.DTimestamptz); ok {
		return int64(t)
	}
	return int64(d.(types.DTimestamp))
}

func datumOf(v int64, t types.Type) types.Datum {
	if t.ID == types.Timestamptz {
		return types.DTimestamptz(v)
	}
	return types.DTimestamp(v)
}
