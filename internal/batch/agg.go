package batch

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/sluice-db/sluice/internal/aggval"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// aggregation is one HashAgg/SimpleAgg run: groups in first-seen order,
// each with one accumulator per call.
type aggregation struct {
	x      *executor
	a      *plan.Agg
	in     []types.Type
	filter []expr.Expr // per call; nil without FILTER
	groups map[string]*aggGroup
	order  []*aggGroup
	div    *aggval.Divider // numeric '/', for avg's result scale

	// Partitioning past the memory limit (aggspill.go).
	groupBytes int64 // what the groups in memory take
	depth      int   // how many partitionings this aggregation is under
	spill      *partitionSet
}

type aggGroup struct {
	key  types.Row
	accs []accumulator
}

// accumulator holds one call's running value in one group.
type accumulator struct {
	seen          map[string]bool // DISTINCT: argument tuples already counted
	n             int64
	sum           aggval.Sum
	best          types.Datum // min / max
	trues, falses int64
	parts         []types.Row // string_agg: value, delimiter, order columns
}

func (x *executor) aggregate(ctx context.Context, n *plan.Node, emit emitFunc) error {
	g := &aggregation{x: x, a: n.Agg, in: n.Inputs[0].Schema, groups: map[string]*aggGroup{}}
	if err := g.prepare(); err != nil {
		return err
	}
	return g.runAll(ctx, n, emit, func(add emitFunc) error { return x.run(ctx, n.Inputs[0], add) })
}

// runAll folds the input feed gives into groups, emits them, then the
// groups of any partitions (aggspill.go).
func (g *aggregation) runAll(ctx context.Context, n *plan.Node, emit emitFunc, feed func(emitFunc) error) error {
	defer func() { g.spill.close() }()
	if err := feed(g.add); err != nil {
		return err
	}
	if err := g.emitGroups(ctx, n, emit); err != nil {
		return err
	}
	g.x.release(g.groupBytes) // emitted: the partitions may have it
	g.groups, g.order, g.groupBytes = nil, nil, 0
	return g.aggregatePartitions(ctx, n, emit)
}

// keep counts n more bytes held by the groups in memory.
func (g *aggregation) keep(n int64) error {
	if err := g.x.keep(n); err != nil {
		return err
	}
	g.groupBytes += n
	return nil
}

// emitGroups sends the groups in memory.
func (g *aggregation) emitGroups(ctx context.Context, n *plan.Node, emit emitFunc) error {
	x := g.x
	if n.Kind == plan.KindSimpleAgg && len(g.order) == 0 {
		g.order = append(g.order, g.newGroup(nil))
	}
	bld := types.NewBuilder(n.Schema, x.size)
	for _, grp := range g.order {
		row := slices.Clone(grp.key)
		for ci := range g.a.Calls {
			v, err := g.output(&g.a.Calls[ci], &grp.accs[ci])
			if err != nil {
				return err
			}
			row = append(row, v)
		}
		if err := send(ctx, emit, bld.Append(types.Insert, row)); err != nil {
			return err
		}
	}
	return send(ctx, emit, bld.Take())
}

func (g *aggregation) prepare() error {
	g.filter = make([]expr.Expr, len(g.a.Calls))
	for i, c := range g.a.Calls {
		if c.Filter == nil {
			continue
		}
		e, err := expr.Build(*c.Filter, g.in)
		if err != nil {
			return err
		}
		g.filter[i] = e
	}
	div, err := aggval.NewDivider()
	if err != nil {
		return err
	}
	g.div = div
	return nil
}

func (g *aggregation) newGroup(key types.Row) *aggGroup {
	grp := &aggGroup{key: key, accs: make([]accumulator, len(g.a.Calls))}
	for i, c := range g.a.Calls {
		if c.Distinct {
			grp.accs[i].seen = map[string]bool{}
		}
	}
	return grp
}

// add folds one input chunk into the groups.
func (g *aggregation) add(_ context.Context, c *types.Chunk) error {
	pass := make([][]bool, len(g.a.Calls))
	for ci, f := range g.filter {
		if f == nil {
			continue
		}
		rows, err := g.x.trueRows(f, c)
		if err != nil {
			return err
		}
		pass[ci] = make([]bool, c.Capacity())
		for _, r := range rows {
			pass[ci][r] = true
		}
	}
	for i := 0; i < c.Capacity(); i++ {
		r := c.Row(i)
		grp, err := g.group(r)
		if errors.Is(err, errSpillRow) {
			continue // written to its partition
		}
		if err != nil {
			return err
		}
		for ci := range g.a.Calls {
			if pass[ci] != nil && !pass[ci][i] {
				continue
			}
			if err := g.accumulate(&g.a.Calls[ci], &grp.accs[ci], r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *aggregation) group(r types.Row) (*aggGroup, error) {
	k, err := keyOf(r, g.a.GroupKeys, g.in)
	if err != nil {
		return nil, err
	}
	grp, ok := g.groups[k]
	if !ok {
		key := pick(r, g.a.GroupKeys)
		size := rowBytes(key) + int64(len(k)) + 64*int64(1+len(g.a.Calls))
		if g.mayPartition(size) {
			if g.spill == nil {
				g.spill = newPartitionSet(g.x.spillDir, g.depth, g.in)
			}
			if err := g.spill.add(k, r); err != nil {
				return nil, err
			}
			return nil, errSpillRow
		}
		if err := g.keep(size); err != nil {
			return nil, err
		}
		grp = g.newGroup(key)
		g.groups[k] = grp
		g.order = append(g.order, grp)
	}
	return grp, nil
}

func (g *aggregation) accumulate(call *plan.AggCall, acc *accumulator, r types.Row) error {
	if call.Kind == plan.AggCountStar {
		acc.n++
		return nil
	}
	v := r[call.Args[0]]
	if v == nil && call.Kind != plan.AggArrayAgg {
		return nil // every aggregate but count(*) and array_agg skips NULLs
	}
	if acc.seen != nil {
		k, err := keyOf(r, call.Args, g.in)
		if err != nil {
			return err
		}
		if acc.seen[k] {
			return nil
		}
		if err := g.keep(int64(len(k)) + 32); err != nil {
			return err
		}
		acc.seen[k] = true
	}
	acc.n++
	switch call.Kind {
	case plan.AggSum, plan.AggAvg:
		return acc.sum.Add(v)
	case plan.AggMin, plan.AggMax:
		c := types.Compare(v, acc.best)
		if acc.best == nil || (call.Kind == plan.AggMax && c > 0) || (call.Kind == plan.AggMin && c < 0) {
			acc.best = v
		}
	case plan.AggBoolAnd, plan.AggBoolOr:
		if v.(bool) {
			acc.trues++
		} else {
			acc.falses++
		}
	case plan.AggStringAgg, plan.AggArrayAgg:
		part := types.Row{v, nil}
		if call.Kind == plan.AggStringAgg {
			part[1] = r[call.Args[1]]
		}
		for _, o := range call.OrderBy {
			part = append(part, r[o.Column])
		}
		// Twice: the parts, then the string or array made of them.
		if err := g.keep(2 * rowBytes(part)); err != nil {
			return err
		}
		acc.parts = append(acc.parts, part)
	}
	return nil
}

// output computes a call's final value, with Postgres's result types.
func (g *aggregation) output(call *plan.AggCall, acc *accumulator) (types.Datum, error) {
	switch call.Kind {
	case plan.AggCount, plan.AggCountStar:
		return acc.n, nil
	case plan.AggMin, plan.AggMax:
		return acc.best, nil
	case plan.AggBoolAnd, plan.AggBoolOr:
		if acc.trues+acc.falses == 0 {
			return nil, nil
		}
		if call.Kind == plan.AggBoolAnd {
			return acc.falses == 0, nil
		}
		return acc.trues > 0, nil
	case plan.AggStringAgg:
		return stringAgg(call, acc.parts), nil
	case plan.AggArrayAgg:
		return arrayAgg(call, acc.parts), nil
	}
	if acc.n == 0 {
		return nil, nil
	}
	if call.Kind == plan.AggSum {
		return acc.sum.Value(call.Type)
	}
	return g.avg(call, acc)
}

func (g *aggregation) avg(call *plan.AggCall, acc *accumulator) (types.Datum, error) {
	return acc.sum.Avg(g.x.ectx, g.div, acc.n, call.Type)
}

// stringAgg joins the values in ORDER BY order (input order otherwise),
// each but the first preceded by its own delimiter, as Postgres does.
func stringAgg(call *plan.AggCall, parts []types.Row) types.Datum {
	if len(parts) == 0 {
		return nil
	}
	sortParts(call, parts)
	var sb strings.Builder
	for i, p := range parts {
		if i > 0 {
			sb.WriteString(asString(p[1]))
		}
		sb.WriteString(asString(p[0]))
	}
	if call.Type.ID == types.Bytea {
		return []byte(sb.String())
	}
	return sb.String()
}

// sortParts orders string_agg/array_agg inputs (value, delimiter, order
// columns...) by the ORDER BY columns, keeping arrival order on ties.
func sortParts(call *plan.AggCall, parts []types.Row) {
	slices.SortStableFunc(parts, func(a, b types.Row) int {
		for i, o := range call.OrderBy {
			if c := compareOrdered(a[2+i], b[2+i], o.Order); c != 0 {
				return c
			}
		}
		return 0
	})
}

// arrayAgg collects the values, NULLs included, in ORDER BY order; no
// input rows give NULL.
func arrayAgg(call *plan.AggCall, parts []types.Row) types.Datum {
	if len(parts) == 0 {
		return nil
	}
	sortParts(call, parts)
	out := make(types.DArray, len(parts))
	for i, p := range parts {
		out[i] = p[0]
	}
	return out
}

func asString(d types.Datum) string {
	switch v := d.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
