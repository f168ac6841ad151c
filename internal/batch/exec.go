package batch

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// emitFunc receives a node's output, one compact chunk at a time. The
// chunk belongs to the receiver once passed.
type emitFunc func(ctx context.Context, c *types.Chunk) error

// executor runs one query. It holds no goroutines: every node runs in the
// caller's goroutine, pushing chunks up the tree.
type executor struct {
	r    Reader
	ectx *expr.Context
	size int
	mem  memBudget // mem.go
	// spillDir is where sorts spill (spill.go); empty: they do not.
	spillDir string
	// provider produces system relations' rows; system holds those read
	// so far, by relation (system.go).
	provider SystemRows
	system   map[string][]types.Row
	// root, for a subquery run per outer row (apply.go), is the query's
	// executor; nil for the query's own.
	root *executor
}

// send checks for cancellation before handing c on, so every producer
// notices a cancel at least once per chunk.
func send(ctx context.Context, emit emitFunc, c *types.Chunk) error {
	if c == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return emit(ctx, c)
}

// run produces n's output into emit.
func (x *executor) run(ctx context.Context, n *plan.Node, emit emitFunc) error {
	switch n.Kind {
	case plan.KindBackfill:
		return x.scan(ctx, n, emit)
	case plan.KindHopWindow:
		h := n.HopWindow
		if h == nil || len(n.Inputs) != 1 {
			return fmt.Errorf("batch: malformed hop_window node")
		}
		if err := h.Check(); err != nil {
			return err
		}
		return x.run(ctx, n.Inputs[0], func(ctx context.Context, c *types.Chunk) error {
			return send(ctx, emit, h.Expand(c, n.Schema, nil, nil))
		})
	case plan.KindSystemScan:
		return x.systemScan(ctx, n, emit)
	case plan.KindApply:
		return x.apply(ctx, n, emit)
	case plan.KindFunctionScan:
		return x.functionScan(ctx, n, emit)
	case plan.KindConnectorSource:
		return sqlerr.New(sqlerr.FeatureNotSupported, "a source cannot be read by a batch query")
	case plan.KindValues:
		return x.values(ctx, n, emit)
	case plan.KindProject:
		return x.project(ctx, n, emit)
	case plan.KindFilter:
		return x.filter(ctx, n, emit)
	case plan.KindUnion:
		for _, in := range n.Inputs {
			if err := x.run(ctx, in, emit); err != nil {
				return err
			}
		}
		return nil
	case plan.KindMaterialize:
		return x.run(ctx, n.Inputs[0], emit)
	case plan.KindHashJoin:
		return x.join(ctx, n, emit)
	case plan.KindHashAgg, plan.KindSimpleAgg:
		return x.aggregate(ctx, n, emit)
	case plan.KindTopN:
		return x.topN(ctx, n, emit)
	case plan.KindOverWindow:
		return x.overWindow(ctx, n, emit)
	case plan.KindDistinct:
		return x.distinct(ctx, n, emit)
	}
	return fmt.Errorf("batch: unsupported plan node %s", n.Kind)
}

// collect runs n and returns all its rows.
func (x *executor) collect(ctx context.Context, n *plan.Node) ([]types.Row, error) {
	var rows []types.Row
	err := x.run(ctx, n, func(_ context.Context, c *types.Chunk) error {
		for i := 0; i < c.Capacity(); i++ {
			r := c.Row(i)
			if err := x.keepRow(r); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return nil
	})
	return rows, err
}

// scan reads the committed rows of a Backfill leaf's upstream table.
func (x *executor) scan(ctx context.Context, n *plan.Node, emit emitFunc) error {
	b := n.Backfill
	it, err := x.r.ScanTable(ctx, storage.TableDesc(b.Upstream))
	if err != nil {
		return err
	}
	defer it.Close()
	bld := types.NewBuilder(n.Schema, x.size)
	for {
		row, ok, err := it.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := send(ctx, emit, bld.Append(types.Insert, pick(row, b.Columns))); err != nil {
			return err
		}
	}
	return send(ctx, emit, bld.Take())
}

func pick(r types.Row, cols []int) types.Row {
	out := make(types.Row, len(cols))
	for i, c := range cols {
		out[i] = r[c]
	}
	return out
}

// values evaluates constant rows strictly.
func (x *executor) values(ctx context.Context, n *plan.Node, emit emitFunc) error {
	bld := types.NewBuilder(n.Schema, x.size)
	for _, descs := range n.Values.Rows {
		row := make(types.Row, len(descs))
		for i, d := range descs {
			e, err := expr.Build(d, nil)
			if err != nil {
				return err
			}
			if row[i], err = expr.EvalRow(x.ectx, e, types.Row{}, nil); err != nil {
				return err
			}
		}
		if err := send(ctx, emit, bld.Append(types.Insert, row)); err != nil {
			return err
		}
	}
	return send(ctx, emit, bld.Take())
}

func (x *executor) project(ctx context.Context, n *plan.Node, emit emitFunc) error {
	in := n.Inputs[0].Schema
	es := make([]expr.Expr, len(n.Project.Exprs))
	for i, d := range n.Project.Exprs {
		e, err := expr.Build(d, in)
		if err != nil {
			return err
		}
		es[i] = e
	}
	return x.run(ctx, n.Inputs[0], func(ctx context.Context, c *types.Chunk) error {
		cols := make([]types.Column, len(es))
		for i, e := range es {
			col, err := e.Eval(x.ectx, c)
			if err != nil {
				return err
			}
			cols[i] = col
		}
		return send(ctx, emit, types.NewChunk(cols, nil))
	})
}

func (x *executor) filter(ctx context.Context, n *plan.Node, emit emitFunc) error {
	cond, err := expr.Build(n.Filter.Cond, n.Inputs[0].Schema)
	if err != nil {
		return err
	}
	keep := func(ctx context.Context, c *types.Chunk) error {
		keep, err := x.trueRows(cond, c)
		if err != nil {
			return err
		}
		return send(ctx, emit, gather(c, keep))
	}
	if lk := lookupOf(n, x.ectx.Now); lk != nil {
		return x.scanKeys(ctx, n.Inputs[0], lk, keep)
	}
	return x.run(ctx, n.Inputs[0], keep)
}

// trueRows returns the rows of c where cond is true (not false, not NULL).
func (x *executor) trueRows(cond expr.Expr, c *types.Chunk) ([]int, error) {
	col, err := cond.Eval(x.ectx, c)
	if err != nil {
		return nil, err
	}
	var keep []int
	for i := 0; i < c.Capacity(); i++ {
		if b, ok := col.Get(i).(bool); ok && b {
			keep = append(keep, i)
		}
	}
	return keep, nil
}

// gather returns the rows idx of c as a compact chunk (nil when none).
func gather(c *types.Chunk, idx []int) *types.Chunk {
	switch len(idx) {
	case 0:
		return nil
	case c.Capacity():
		return c
	}
	cols := make([]types.Column, len(c.Cols))
	for i, col := range c.Cols {
		cols[i] = col.Gather(idx)
	}
	return types.NewChunk(cols, nil)
}

// keyOf encodes the datums of r at cols as a memcomparable string: equal
// values (1.0 and 1.00, say) encode equally, so it serves as a map key.
func keyOf(r types.Row, cols []int, ts []types.Type) (string, error) {
	k := pick(r, cols)
	kt := make([]types.Type, len(cols))
	for i, c := range cols {
		kt[i] = ts[c]
	}
	b, err := codec.EncodeKey(nil, k, kt, nil)
	return string(b), err
}

// distinct emits the first row of every distinct key, projected to Keys
// (distinct.go).
func (x *executor) distinct(ctx context.Context, n *plan.Node, emit emitFunc) error {
	d := &dedup{x: x, keys: n.Distinct.Keys, in: n.Inputs[0].Schema, out: n.Schema}
	return d.runAll(ctx, emit, func(add emitFunc) error { return x.run(ctx, n.Inputs[0], add) })
}

// topN keeps rows Offset+1 … Offset+Limit of each group by OrderBy, ties
// broken by the input's stream key so the result is deterministic.
func (x *executor) topN(ctx context.Context, n *plan.Node, emit emitFunc) error {
	t := n.TopN
	in := n.Inputs[0].Schema
	groups := map[string][]types.Row{}
	var order []string
	err := x.run(ctx, n.Inputs[0], func(_ context.Context, c *types.Chunk) error {
		for i := 0; i < c.Capacity(); i++ {
			r := c.Row(i)
			k, err := keyOf(r, t.GroupKeys, in)
			if err != nil {
				return err
			}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			if err := x.keepRow(r); err != nil {
				return err
			}
			groups[k] = append(groups[k], r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sk := n.Inputs[0].StreamKey
	bld := types.NewBuilder(n.Schema, x.size)
	for _, k := range order {
		for i, r := range topOf(groups[k], t, sk) {
			if t.Rank {
				r = append(slices.Clip(r), t.Offset+int64(i)+1)
			}
			if err := send(ctx, emit, bld.Append(types.Insert, r)); err != nil {
				return err
			}
		}
	}
	return send(ctx, emit, bld.Take())
}

func topOf(g []types.Row, t *plan.TopN, sk []int) []types.Row {
	slices.SortStableFunc(g, func(a, b types.Row) int {
		if c := compareBy(a, b, t.OrderBy); c != 0 {
			return c
		}
		for _, c := range sk {
			if x := types.Compare(a[c], b[c]); x != 0 {
				return x
			}
		}
		return 0
	})
	lo := min(int(t.Offset), len(g))
	hi := len(g)
	if t.Limit >= 0 {
		hi = min(lo+int(t.Limit), len(g))
	}
	if t.WithTies {
		for hi < len(g) && hi > lo && compareBy(g[hi-1], g[hi], t.OrderBy) == 0 {
			hi++
		}
	}
	return g[lo:hi]
}
