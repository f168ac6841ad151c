package batch

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A correlated subquery the planner could not turn into a join (a
// condition other than equalities on the outer query, ARRAY(SELECT …))
// runs once for each outer row, as Postgres runs a SubPlan: the apply
// node evaluates its inner plan with the outer row in the expression
// context (expr.KindOuter reads it) and appends the result. Outer rows
// that agree on the columns the subquery reads share one run.

// apply runs n (plan.KindApply).
func (x *executor) apply(ctx context.Context, n *plan.Node, emit emitFunc) error {
	if n.Apply == nil || len(n.Inputs) != 2 {
		return sqlerr.New(sqlerr.Internal, "batch: malformed apply node")
	}
	a := &applier{x: x, n: n, refs: outerRefs(n.Inputs[1]), memo: map[string][]types.Datum{},
		fresh: n.Apply.Mode == plan.ApplyJoin || volatile(n.Inputs[1])}
	for _, i := range a.refs {
		a.types = append(a.types, n.Inputs[0].Schema[i])
	}
	bld := types.NewBuilder(n.Schema, x.size)
	return x.run(ctx, n.Inputs[0], func(ctx context.Context, c *types.Chunk) error {
		for i := 0; i < c.Capacity(); i++ {
			row := c.Row(i)
			res, err := a.result(ctx, row)
			if err != nil {
				return err
			}
			if n.Apply.Mode == plan.ApplyJoin {
				err = a.emitJoined(ctx, bld, emit, row, res)
			} else {
				err = send(ctx, emit, bld.Append(types.Insert, append(row, res...)))
			}
			if err != nil {
				return err
			}
		}
		return send(ctx, emit, bld.Take())
	})
}

// emitJoined emits the outer row with each of the subquery's rows, which
// res holds one after another.
func (a *applier) emitJoined(ctx context.Context, bld *types.Builder, emit emitFunc, outer types.Row, res []types.Datum) error {
	w := len(a.n.Inputs[1].Schema)
	for at := 0; at+w <= len(res); at += w {
		row := append(append(make(types.Row, 0, len(outer)+w), outer...), res[at:at+w]...)
		if err := send(ctx, emit, bld.Append(types.Insert, row)); err != nil {
			return err
		}
	}
	return nil
}

// applier runs one apply node's subquery.
type applier struct {
	x     *executor
	n     *plan.Node
	refs  []int // the outer columns the subquery reads
	types []types.Type
	// fresh: every outer row runs the subquery (no memo), as a join's
	// rows pass on and a volatile subquery's differ.
	fresh bool
	memo  map[string][]types.Datum
}

// result is what the subquery appends to outer row, from the memo when
// an earlier row agreed on the columns it reads.
func (a *applier) result(ctx context.Context, outer types.Row) ([]types.Datum, error) {
	if a.fresh {
		return a.runRow(ctx, outer)
	}
	key, err := a.key(outer)
	if err != nil {
		return nil, err
	}
	if res, ok := a.memo[key]; ok {
		return res, nil
	}
	res, err := a.runRow(ctx, outer)
	if err != nil {
		return nil, err
	}
	if err := a.x.keepRow(res); err != nil {
		return nil, err
	}
	a.memo[key] = res
	return res, nil
}

// key encodes the outer row's referenced columns.
func (a *applier) key(outer types.Row) (string, error) {
	vals := make(types.Row, len(a.refs))
	for j, i := range a.refs {
		vals[j] = outer[i]
	}
	buf, err := codec.EncodeValue(nil, vals, a.types)
	return string(buf), err
}

// runRow runs the subquery for outer, its result followed (but for a
// join's) by the error of a run that failed on its data, as text for
// expr.KindSingleRow to raise where the value is read: Postgres fails
// only if it evaluates the subquery for the row, which a CASE or an AND
// before it may spare. Other errors end the query.
func (a *applier) runRow(ctx context.Context, outer types.Row) ([]types.Datum, error) {
	res, err := a.run(ctx, outer)
	if a.n.Apply.Mode == plan.ApplyJoin {
		return res, err
	}
	if err == nil {
		return append(res, nil), nil
	}
	if !isDataError(err) || ctx.Err() != nil {
		return nil, err
	}
	width := len(a.n.Schema) - len(a.n.Inputs[0].Schema)
	failed := make([]types.Datum, width)
	failed[width-1] = expr.RowErrorText(err)
	return failed, nil
}

// isDataError reports whether err is about the rows' values (a division
// by zero, a bad cast, more than one row): SQLSTATE classes 21 and 22.
func isDataError(err error) bool {
	code := string(sqlerr.CodeOf(err))
	return strings.HasPrefix(code, "22") || strings.HasPrefix(code, "21")
}

// errEnough stops a subquery once its result is known.
var errEnough = errors.New("batch: subquery result known")

// run evaluates the subquery for outer.
func (a *applier) run(ctx context.Context, outer types.Row) ([]types.Datum, error) {
	sub := a.x.withOuter(outer)
	defer sub.mem.close()
	inner := a.n.Inputs[1]
	var count int64
	var first types.Datum
	var all types.DArray
	err := sub.run(ctx, inner, func(_ context.Context, c *types.Chunk) error {
		for i := 0; i < c.Capacity(); i++ {
			if a.n.Apply.Mode == plan.ApplyJoin {
				row := c.Row(i)
				if err := sub.keepRow(row); err != nil {
					return err
				}
				all = append(all, row...)
				continue
			}
			if a.n.Apply.Mode == plan.ApplyExists {
				count++
				return errEnough
			}
			v := c.Cols[0].Get(i)
			if count == 0 {
				first = v
			}
			count++
			switch a.n.Apply.Mode {
			case plan.ApplyArray:
				if err := sub.keepRow(types.Row{v}); err != nil {
					return err
				}
				all = append(all, v)
			case plan.ApplyScalar:
				if count > 1 {
					return errEnough
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	switch a.n.Apply.Mode {
	case plan.ApplyScalar:
		return []types.Datum{count, first}, nil
	case plan.ApplyExists:
		return []types.Datum{count > 0}, nil
	case plan.ApplyArray:
		if all == nil {
			all = types.DArray{}
		}
		return []types.Datum{all}, nil
	case plan.ApplyJoin:
		return all, nil // the rows' values, one row after another
	}
	return nil, sqlerr.Errorf(sqlerr.Internal, "batch: unknown apply mode %q", a.n.Apply.Mode)
}

// withOuter is an executor for a subquery evaluated for outer: it reads
// the same snapshot and system rows, with its own memory budget under
// the same limit and pool.
func (x *executor) withOuter(outer types.Row) *executor {
	return &executor{r: x.r, ectx: x.ectx.WithOuter(outer), size: x.size, mem: memBudget{limit: x.mem.limit, pool: x.mem.pool},
		spillDir: x.spillDir, provider: x.provider, system: x.system, root: x.rootExecutor()}
}

// rootExecutor is the query's own executor, which keeps what outlives
// one run of a subquery (the system rows read).
func (x *executor) rootExecutor() *executor {
	if x.root != nil {
		return x.root
	}
	return x
}

// outerRefs lists the outer columns the plan under n reads, in order. A
// nested apply's subquery reads its own outer row, not this one.
func outerRefs(n *plan.Node) []int {
	var refs []int
	var walk func(d expr.Desc)
	walk = func(d expr.Desc) {
		if d.Kind == expr.KindOuter && !slices.Contains(refs, d.Index) {
			refs = append(refs, d.Index)
		}
		for _, a := range d.Args {
			walk(a)
		}
	}
	var visit func(n *plan.Node)
	visit = func(n *plan.Node) {
		own := *n
		own.Inputs = nil
		plan.MapExprs(&own, func(d expr.Desc) expr.Desc { walk(d); return d })
		for i, in := range n.Inputs {
			if n.Kind == plan.KindApply && i == 1 {
				continue
			}
			visit(in)
		}
	}
	visit(n)
	slices.Sort(refs)
	return refs
}

// volatile reports whether the plan under n calls a function whose
// value differs between calls (random()): its subquery cannot share one
// run between outer rows.
func volatile(n *plan.Node) bool {
	found := false
	plan.MapExprs(n, func(d expr.Desc) expr.Desc {
		found = found || expr.Any(d, func(x expr.Desc) bool { return x.Kind == expr.KindFunc && expr.IsVolatile(x.Name) })
		return d
	})
	return found
}
