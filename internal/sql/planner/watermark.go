package planner

import (
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream/source"
)

// Event time: a source or append-only table declares `WATERMARK FOR col
// AS expr`; the engine puts a watermark filter over its rows, and every
// plan node says which of its output columns carry watermarks
// (plan.DeriveStreamProps). The planner uses that to put a watermarked
// column first among an aggregation's group keys and a join's keys, so
// state below a watermark is one range per vnode to delete, and to plan
// EMIT ON WINDOW CLOSE.

// watermarkOf binds the statement's WATERMARK FOR over the columns of
// spec: the column must exist and have a type a watermark can order, and
// the expression must have the column's type.
func (q *query) watermarkOf(spec engine.TableSpec, withConnector bool) (*catalog.Watermark, error) {
	w := q.st.Watermark
	if w == nil {
		return nil, nil
	}
	at := func(code sqlerr.Code, format string, args ...any) error {
		e := sqlerr.Errorf(code, format, args...)
		e.Position = parser.Position(q.st.Input, w.Offset)
		return e
	}
	// A connector table with a key upserts, APPEND ONLY or not; one
	// without takes no DML at all.
	appendOnly := spec.AppendOnly && !withConnector || withConnector && len(spec.PK) == 0
	if !q.st.Source && !appendOnly {
		return nil, at(sqlerr.FeatureNotSupported, "WATERMARK FOR needs a source or an APPEND ONLY table without a connector "+
			"(or a connector table without a primary key): an update or delete could bring back a row behind the watermark")
	}
	i := slices.IndexFunc(spec.Columns, func(c catalog.Column) bool { return c.Name == w.Column })
	if i < 0 {
		return nil, at(sqlerr.UndefinedColumn, "column %q named in WATERMARK FOR does not exist", w.Column)
	}
	t := spec.Columns[i].Type
	if !source.WatermarkType(t) {
		return nil, at(sqlerr.DatatypeMismatch, "WATERMARK FOR column %q is %s; it must be a timestamp, timestamptz, date or integer", w.Column, t)
	}
	n, err := parser.ParseExpr(w.Expr)
	if err != nil {
		return nil, at(sqlerr.SyntaxError, "WATERMARK FOR %s AS %s: %v", w.Column, w.Expr, err)
	}
	scope := &relExpr{}
	for _, c := range spec.Columns {
		scope.cols = append(scope.cols, column{name: c.Name, typ: c.Type})
	}
	b := &binder{q: q, scope: scope, clause: "WATERMARK FOR"}
	d, err := b.bind(n)
	if err != nil {
		return nil, at(sqlerr.CodeOf(err), "WATERMARK FOR %s: %v", w.Column, err)
	}
	if usesNow(d.d) || hasVolatile(d.d) {
		return nil, at(sqlerr.FeatureNotSupported, "WATERMARK FOR %s AS %s: the expression must depend on the row only", w.Column, w.Expr)
	}
	if d.t != t {
		return nil, at(sqlerr.DatatypeMismatch, "WATERMARK FOR %s AS %s is %s; it must be %s, the column's type", w.Column, w.Expr, d.t, t)
	}
	return &catalog.Watermark{Col: i, Expr: d.d, Text: w.Expr}, nil
}

// hasVolatile reports a call whose value is not a function of its
// arguments (random()).
func hasVolatile(d expr.Desc) bool {
	if d.Kind == expr.KindFunc && (d.Name == "random" || d.Name == "gen_random_uuid" || d.Name == "clock_timestamp") {
		return true
	}
	return slices.ContainsFunc(d.Args, hasVolatile)
}

// watermarkedFirst moves to the front of the group keys the first one
// monotone in a column of from carrying watermarks: the aggregation's
// state is keyed by its group keys in order, and closing groups below a
// watermark deletes a key range only when the watermarked key leads.
func watermarkedFirst(from *relExpr, groups []typed) {
	plan.DeriveStreamProps(from.node)
	for i, g := range groups {
		if c, ok := plan.MonotoneIn(g.d); ok && slices.Contains(from.node.Watermarks, c) {
			if i > 0 {
				w := groups[i]
				copy(groups[1:i+1], groups[:i])
				groups[0] = w
			}
			return
		}
	}
}

// watermarkedKeyFirst moves to the front the first equi-join key whose
// two sides are columns carrying watermarks (an inner join cleans its
// state below the first key's watermark).
func watermarkedKeyFirst(left, right *relExpr, jt plan.JoinType, keys []equiKey) {
	if jt != plan.InnerJoin {
		return
	}
	plan.DeriveStreamProps(left.node)
	plan.DeriveStreamProps(right.node)
	for i, k := range keys {
		if k.nullSafe || k.l.d.Kind != expr.KindInput || k.r.d.Kind != expr.KindInput {
			continue
		}
		if slices.Contains(left.node.Watermarks, k.l.d.Index) && slices.Contains(right.node.Watermarks, k.r.d.Index) {
			if i > 0 {
				w := keys[i]
				copy(keys[1:i+1], keys[:i])
				keys[0] = w
			}
			return
		}
	}
}

// emitOnWindowClose marks the aggregation a view ends in (under
// projections and filters) to emit each group once, when the watermark
// on its first group key passes it.
func emitOnWindowClose(root *plan.Node) error {
	n := root
	for n.Kind == plan.KindProject || n.Kind == plan.KindFilter {
		n = n.Inputs[0]
	}
	if n.Kind != plan.KindHashAgg {
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"EMIT ON WINDOW CLOSE needs a view that ends in a GROUP BY aggregation")
	}
	plan.DeriveStreamProps(n)
	if !slices.Contains(n.Inputs[0].Watermarks, n.Agg.GroupKeys[0]) {
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"EMIT ON WINDOW CLOSE needs a GROUP BY column with a watermark: a WATERMARK FOR column of a source "+
				"or append-only table, or a window_start or window_end of TUMBLE or HOP over one")
	}
	n.Agg.EmitOnWindowClose = true
	plan.DeriveStreamProps(root)
	return nil
}
