package stateless

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
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
		v.started = true
		return stream.BarrierMsg(b), nil
	case <-ctx.Done():
		return stream.Message{}, ctx.Err()
	}
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
			return stream.ChunkMsg(c), nil
		}
	}
	return stream.ChunkMsg(b.Take()), nil
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
