package stateless

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// ErrBarrierInboxClosed is returned by Values when the actor's barrier
// inbox closes: the actor was torn down without a stop barrier.
var ErrBarrierInboxClosed = errors.New("stateless: barrier inbox closed")

// Values is a source of constant rows. It emits them once, as Inserts,
// right after the first barrier (so they belong to the epoch that barrier
// opens), and afterwards only forwards barriers from the actor's inbox.
type Values struct {
	barriers  <-chan *stream.Barrier
	rows      [][]expr.Expr
	exprCtx   *expr.Context
	schema    []types.Type
	chunkSize int
	// started is set once the first barrier passed; next is the index of
	// the first row not yet emitted.
	started bool
	next    int
	// emitted, when set, holds one row once the rows were emitted: the
	// proof, committed with them, that a rebuilt actor must not repeat them.
	emitted *storage.StateTable
	marked  bool
}

// ValuesTable is the shape of a Values node's emitted-flag table: a single
// boolean row, no key, vnode 0.
func ValuesTable(id uint32) plan.Table {
	return plan.Table{ID: id, Types: []types.Type{types.TBool}}
}

func newValues(env *stream.Env, n *plan.Node) (*Values, error) {
	if n.Values == nil {
		return nil, fmt.Errorf("stateless: values node without Values")
	}
	if env == nil {
		return nil, fmt.Errorf("stateless: values needs an environment (barrier inbox)")
	}
	v := &Values{barriers: env.Barriers, exprCtx: exprContext(env), chunkSize: env.ChunkSizeOrDefault(), schema: n.Schema}
	for i, descs := range n.Values.Rows {
		row, err := v.buildRow(i, descs)
		if err != nil {
			return nil, err
		}
		v.rows = append(v.rows, row)
	}
	if v.schema == nil && len(v.rows) == 0 {
		return nil, fmt.Errorf("stateless: values node with neither rows nor schema")
	}
	if t := n.Values.Table; t != nil {
		want := ValuesTable(t.ID)
		if !slices.Equal(t.Types, want.Types) || len(t.PK) != 0 || len(t.DistKey) != 0 {
			return nil, fmt.Errorf("stateless: values table %d has shape %v pk %v; want one boolean column, no key", t.ID, t.Types, t.PK)
		}
		st, err := env.OpenTable(*t)
		if err != nil {
			return nil, fmt.Errorf("stateless: values table: %w", err)
		}
		v.emitted = st
	}
	return v, nil
}

// buildRow type-checks one row against the schema, taking the schema from
// the first row when the node declares none.
func (v *Values) buildRow(i int, descs []expr.Desc) ([]expr.Expr, error) {
	row := make([]expr.Expr, len(descs))
	for j, d := range descs {
		e, err := expr.Build(d, nil)
		if err != nil {
			return nil, fmt.Errorf("stateless: values row %d column %d: %w", i, j, err)
		}
		row[j] = e
	}
	if v.schema == nil {
		for _, e := range row {
			v.schema = append(v.schema, e.Type())
		}
	}
	if len(row) != len(v.schema) {
		return nil, fmt.Errorf("stateless: values row %d has %d columns, schema %d", i, len(row), len(v.schema))
	}
	for j, e := range row {
		if e.Type().ID == types.Unknown && v.schema[j].ID != types.Unknown {
			// An untyped literal ('abc', NULL) reads as the schema's type;
			// the cast is folded here, so a bad literal fails the build.
			c, err := expr.Build(expr.Cast(descs[j], v.schema[j]), nil)
			if err != nil {
				return nil, fmt.Errorf("stateless: values row %d column %d: %w", i, j, err)
			}
			row[j] = c
			continue
		}
		if t := e.Type(); t != v.schema[j] {
			return nil, fmt.Errorf("stateless: values row %d column %d is %s, schema says %s", i, j, t, v.schema[j])
		}
	}
	return row, nil
}

// Schema returns the rows' column types.
func (v *Values) Schema() []types.Type { return v.schema }

// Next returns the first barrier, then the rows in chunks, then barriers.
func (v *Values) Next(ctx context.Context) (stream.Message, error) {
	if v.started && v.next < len(v.rows) {
		return v.nextChunk(ctx)
	}
	select {
	case b, ok := <-v.barriers:
		if !ok {
			return stream.Message{}, ErrBarrierInboxClosed
		}
		return v.onBarrier(ctx, b)
	case <-ctx.Done():
		return stream.Message{}, ctx.Err()
	}
}

// onBarrier seals the flag table and, at the first barrier, skips the rows
// if a committed flag says an earlier incarnation emitted them.
func (v *Values) onBarrier(ctx context.Context, b *stream.Barrier) (stream.Message, error) {
	if v.emitted != nil {
		if !v.started {
			_, done, err := v.emitted.Get(ctx, types.Row{})
			if err != nil {
				return stream.Message{}, fmt.Errorf("stateless: values flag: %w", err)
			}
			if done {
				v.next, v.marked = len(v.rows), true
			}
		}
		if err := v.emitted.Seal(b.Epoch); err != nil {
			return stream.Message{}, fmt.Errorf("stateless: values flag: %w", err)
		}
	}
	v.started = true
	return stream.BarrierMsg(b), nil
}

// markEmitted writes the flag in the epoch that carries the rows.
func (v *Values) markEmitted() error {
	if v.emitted == nil || v.marked {
		return nil
	}
	v.marked = true
	return v.emitted.Insert(types.Row{true})
}

// nextChunk evaluates and emits up to chunkSize rows.
func (v *Values) nextChunk(ctx context.Context) (stream.Message, error) {
	if err := ctx.Err(); err != nil {
		return stream.Message{}, err
	}
	b := types.NewBuilder(v.schema, v.chunkSize)
	for v.next < len(v.rows) {
		row, err := v.evalRow(v.rows[v.next])
		if err != nil {
			return stream.Message{}, err
		}
		v.next++
		if c := b.Append(types.Insert, row); c != nil {
			return stream.ChunkMsg(c), v.maybeMark()
		}
	}
	return stream.ChunkMsg(b.Take()), v.markEmitted()
}

func (v *Values) maybeMark() error {
	if v.next < len(v.rows) {
		return nil
	}
	return v.markEmitted()
}

// evalRow evaluates a row's constants. A row error (1/0) is NULL and
// counted, as anywhere in a streaming job; evaluation happens here rather
// than at build time so now() reads the context of the running epoch.
func (v *Values) evalRow(row []expr.Expr) (types.Row, error) {
	out := make(types.Row, len(row))
	for j, e := range row {
		d, err := expr.EvalRow(v.exprCtx, e, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("stateless: values column %d: %w", j, err)
		}
		out[j] = d
	}
	return out, nil
}
