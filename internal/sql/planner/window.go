package planner

import (
	"fmt"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Window functions (f(…) OVER (…)) in a select list or ORDER BY are
// computed after WHERE, GROUP BY and HAVING: the calls' arguments,
// PARTITION BY and ORDER BY are bound over that relation, projected
// beside its columns, and one over-window node per distinct window
// (partition and order) appends the calls' values. The select list is
// then bound with each call replaced by its column.

// windowFuncs returns the window calls in ns, outside subqueries. A
// window call inside another's arguments or window is 42P20.
func (q *query) windowFuncs(ns ...*pg_query.Node) ([]*pg_query.FuncCall, error) {
	var out []*pg_query.FuncCall
	var err error
	for _, n := range ns {
		walkNodes(n, func(x any) bool {
			switch x := x.(type) {
			case *pg_query.FuncCall:
				if x.Over == nil {
					return true
				}
				if nested := q.nestedWindow(x); nested != nil && err == nil {
					err = errAt(q.st, sqlerr.WindowingError, nested.Location, "window function calls cannot be nested")
				}
				out = append(out, x)
				return false
			case *pg_query.SubLink, *pg_query.SelectStmt:
				return false
			}
			return true
		})
	}
	return out, err
}

func (q *query) nestedWindow(f *pg_query.FuncCall) *pg_query.FuncCall {
	var found *pg_query.FuncCall
	for _, n := range slices.Concat(f.Args, []*pg_query.Node{f.AggFilter}, f.Over.PartitionClause, f.Over.OrderClause) {
		walkNodes(n, func(x any) bool {
			if c, ok := x.(*pg_query.FuncCall); ok && c.Over != nil && found == nil {
				found = c
			}
			switch x.(type) {
			case *pg_query.SubLink, *pg_query.SelectStmt:
				return false
			}
			return found == nil
		})
	}
	return found
}

// windows plans s's window calls over r, bound by b, and returns the
// relation with their columns and the binder for what is above them.
func (q *query) windows(r *relExpr, b *binder, s *pg_query.SelectStmt) (*relExpr, *binder, error) {
	if err := q.checkNamedWindows(b, s.WindowClause); err != nil {
		return nil, nil, err
	}
	fs, err := q.windowFuncs(slices.Concat(s.TargetList, sortNodes(s))...)
	if err != nil || len(fs) == 0 {
		return r, b, err
	}
	if len(b.types()) != len(r.cols) {
		return nil, nil, fmt.Errorf("planner: window input has %d columns, its binder %d", len(r.cols), len(b.types()))
	}
	var calls []*winCall
	for _, f := range fs {
		def, err := q.windowDef(f.Over, s.WindowClause)
		if err != nil {
			return nil, nil, err
		}
		c, err := q.bindWindowCall(b, f, def)
		if err != nil {
			return nil, nil, err
		}
		calls = append(calls, c)
	}
	wr, cols := q.overWindows(r, calls)
	wb := *b
	if b.hook == nil {
		wb.scope = wr // the FROM's columns, then the windows'
	} else {
		wb.schema = func() []types.Type { return colTypes(wr.cols) } // above a GROUP BY
	}
	wb.hook = func(n *pg_query.Node) (typed, bool, error) {
		if f := n.GetFuncCall(); f != nil && f.Over != nil {
			for i, c := range calls {
				if proto.Equal(c.f, f) {
					return typed{d: expr.Input(cols[i], c.call.Type), t: c.call.Type}, true, nil
				}
			}
			return typed{}, true, fmt.Errorf("planner: window call at %d not planned", f.Location)
		}
		if b.hook != nil {
			return b.hook(n)
		}
		return typed{}, false, nil
	}
	return wr, &wb, nil
}

// overWindows projects the calls' inputs beside r's columns and chains one
// over-window node per distinct window. It returns the relation and each
// call's column in it.
func (q *query) overWindows(r *relExpr, calls []*winCall) (*relExpr, []int) {
	outs := make([]outCol, len(r.cols))
	for i, c := range r.cols {
		outs[i] = outCol{t: typed{d: expr.Input(i, c.typ), t: c.typ}, name: c.name, qual: c.qual, hidden: c.hidden, unknown: c.unknown}
	}
	col := func(t typed) int {
		for i, o := range outs {
			if descEqual(o.t.d, t.d) {
				return i
			}
		}
		outs = append(outs, outCol{t: t, name: "?window_input", hidden: true})
		return len(outs) - 1
	}
	type window struct {
		first *winCall
		part  []int
		order []plan.ColumnOrder
		calls []int // indexes into calls
	}
	var ws []*window
	for i, c := range calls {
		for _, a := range c.args {
			c.call.Args = append(c.call.Args, col(a))
		}
		if c.filter != nil {
			f := col(*c.filter)
			c.call.Filter = &f
		}
		at := slices.IndexFunc(ws, func(w *window) bool { return w.first.sameWindow(c) })
		if at < 0 {
			w := &window{first: c}
			for _, p := range c.part {
				if k := col(p); !slices.Contains(w.part, k) {
					w.part = append(w.part, k)
				}
			}
			for j, o := range c.order {
				w.order = append(w.order, plan.ColumnOrder{Column: col(o), Order: c.orders[j]})
			}
			ws, at = append(ws, w), len(ws)
		}
		ws[at].calls = append(ws[at].calls, i)
	}
	in := q.project(r, outs, true)
	for i := range r.cols {
		in.cols[i] = r.cols[i] // keep what the projection does not carry (src, key)
	}
	where := make([]int, len(calls))
	for _, w := range ws {
		var pc []plan.WindowCall
		for _, i := range w.calls {
			where[i] = len(in.cols) + len(pc)
			pc = append(pc, calls[i].call)
		}
		in = q.overWindowNode(in, w.part, w.order, pc)
	}
	return in, where
}

// overWindowNode appends one over-window node computing calls over in.
// Its table is keyed like a group top-N's (partition, order, stream key);
// its output is keyed by the input's key and the partition, so a row that
// moves to another partition (another actor) is two rows downstream.
func (q *query) overWindowNode(in *relExpr, part []int, order []plan.ColumnOrder, calls []plan.WindowCall) *relExpr {
	t, kept := topNTable(in.node, part, order)
	key := slices.Clone(part)
	for _, k := range in.node.StreamKey {
		if !slices.Contains(key, k) {
			key = append(key, k)
		}
	}
	schema := slices.Clone(in.node.Schema)
	cols := slices.Clone(in.cols)
	for i, c := range calls {
		schema = append(schema, c.Type)
		cols = append(cols, column{name: fmt.Sprintf("?over_%d", i), typ: c.Type, hidden: true})
	}
	n := &plan.Node{Kind: plan.KindOverWindow, Inputs: []*plan.Node{in.node}, Schema: schema, StreamKey: key,
		OverWindow: &plan.OverWindow{PartitionBy: part, OrderBy: kept, Calls: calls, Table: t}}
	return &relExpr{node: n, cols: cols}
}
