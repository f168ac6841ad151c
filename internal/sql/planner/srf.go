package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A set-returning function in a batch query's select list (SELECT
// unnest(a), generate_series(1, n) …) makes one output row per value, as
// in Postgres: the function runs for each row of FROM (after WHERE) as an
// apply joining its rows on (plan.ApplyJoin), and every call of it in the
// select list reads the same value. One distinct call per select list is
// supported (Postgres runs several in lockstep).
//
// information_schema._pg_expandarray(array), which JDBC's metadata
// queries use, returns records (x, n): the element and its position. A
// record is not a type of its own here: its fields are columns, (f(a)).x
// reads one, and a record in a select list is shown as its text, (x,n),
// with its fields carried as hidden columns named "name.x", which
// (sub.name).x reads from an enclosing query.

// srfNames are the set-returning functions a select list may call.
var srfNames = map[string]bool{"unnest": true, "generate_series": true, "_pg_expandarray": true}

// field is one field of a record value.
type field struct {
	name string
	t    typed
}

// selectListSRF finds the set-returning call in list; nil when there is
// none.
func (q *query) selectListSRF(list []*pg_query.Node) (*pg_query.FuncCall, string, error) {
	var call *pg_query.FuncCall
	var key string
	var err error
	for _, n := range list {
		walkNodes(n, func(x any) bool {
			if _, sub := x.(*pg_query.SubLink); sub {
				return false
			}
			if where, n, loc := conditional(x); n != nil && err == nil && hasSRF(n) {
				err = errAt(q.st, sqlerr.FeatureNotSupported, loc, "set-returning functions are not allowed in %s", where)
				return false
			}
			fc, ok := x.(*pg_query.FuncCall)
			if !ok || !srfNames[funcName(fc)] || err != nil {
				return true
			}
			k, derr := parser.DeparseExpr(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}})
			switch {
			case derr != nil:
				err = derr
			case call == nil:
				call, key = fc, k
			case k != key:
				err = errAt(q.st, sqlerr.FeatureNotSupported, fc.Location,
					"only one set-returning function call is supported in a select list")
			}
			return false
		})
	}
	return call, key, err
}

// conditional recognises a node that evaluates its arguments only
// sometimes (CASE, COALESCE), where Postgres refuses a set-returning
// call: its name, the node, its location; n is nil for other nodes.
func conditional(x any) (where string, n *pg_query.Node, loc int32) {
	switch v := x.(type) {
	case *pg_query.CaseExpr:
		return "CASE", &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: v}}, v.Location
	case *pg_query.CoalesceExpr:
		return "COALESCE", &pg_query.Node{Node: &pg_query.Node_CoalesceExpr{CoalesceExpr: v}}, v.Location
	}
	return "", nil, -1
}

// hasSRF reports whether a set-returning call is under n (not in a
// subquery).
func hasSRF(n *pg_query.Node) bool {
	found := false
	walkNodes(n, func(y any) bool {
		if _, sub := y.(*pg_query.SubLink); sub {
			return false
		}
		if fc, ok := y.(*pg_query.FuncCall); ok && srfNames[funcName(fc)] {
			found = true
		}
		return !found
	})
	return found
}

// selectListSRFs joins the select list's set-returning call onto b's
// scope and returns the binder that reads it.
func (q *query) selectListSRFs(from *relExpr, b *binder, list []*pg_query.Node) (*relExpr, *binder, error) {
	call, key, err := q.selectListSRF(list)
	if err != nil || call == nil {
		return from, b, err
	}
	if q.streaming || b.hook != nil || b.schema != nil || b.scope != from {
		return nil, nil, errAt(q.st, sqlerr.FeatureNotSupported, call.Location,
			"set-returning functions in a select list are supported only in a batch query without GROUP BY, aggregates or window functions")
	}
	args, typ, _, err := q.bindSRF(b, call)
	if err != nil {
		return nil, nil, err
	}
	name := funcName(call)
	out, at := q.joinSRF(from, &pg_query.RangeFunction{}, name, args, typ, true)
	value := srfValue(name, at, typ)
	nb := &binder{q: q, scope: out, clause: b.clause}
	nb.hook = func(n *pg_query.Node) (typed, bool, error) {
		fc := n.GetFuncCall()
		if fc == nil || funcName(fc) != name {
			return typed{}, false, nil
		}
		if k, err := parser.DeparseExpr(n); err != nil || k != key {
			return typed{}, false, err
		}
		return value, true, nil
	}
	return out, nb, nil
}

// joinSRF joins onto from, for each of its rows, the rows of
// set-returning function name of args (bound over from) as FROM item f
// has them (funcRel), hidden or not. It returns the relation and where
// the function's columns start. The arguments are computed as columns of
// from's rows (where a reference to an enclosing query still reads its
// row), and the function scan reads them from its outer row.
func (q *query) joinSRF(from *relExpr, f *pg_query.RangeFunction, name string, args []typed, typ types.Type, hidden bool) (*relExpr, int) {
	descs := make([]expr.Desc, len(args))
	extra := make([]outCol, len(args))
	for i, a := range args {
		descs[i] = expr.Outer(len(from.cols)+i, a.t)
		extra[i] = outCol{t: a, name: "_srf_arg", hidden: true}
	}
	from = q.extend(from, extra...)
	fn := q.funcRel(f, name, descs, typ)
	at := len(from.cols)
	out := &relExpr{cols: append([]column(nil), from.cols...)}
	for i, c := range fn.cols {
		if hidden { // a select list's call: read through the binder's hook, not by name
			c = column{name: "_srf" + string(rune('0'+i)), typ: c.typ, hidden: true}
		}
		out.cols = append(out.cols, c)
	}
	out.node = &plan.Node{Kind: plan.KindApply, Inputs: []*plan.Node{from.node, fn.node}, Schema: colTypes(out.cols),
		StreamKey: append(append([]int(nil), from.node.StreamKey...), len(out.cols)-1), Apply: &plan.Apply{Mode: plan.ApplyJoin}}
	return out, at
}

// extend projects r's columns unchanged (with what GROUP BY knows of
// their tables' keys) followed by extra.
func (q *query) extend(r *relExpr, extra ...outCol) *relExpr {
	outs := make([]outCol, 0, len(r.cols)+len(extra))
	for i, c := range r.cols {
		outs = append(outs, outCol{t: typed{d: expr.Input(i, c.typ), t: c.typ}, name: c.name, qual: c.qual, hidden: c.hidden, unknown: c.unknown})
	}
	out := q.project(r, append(outs, extra...), true)
	for i, c := range r.cols {
		out.cols[i].src, out.cols[i].key = c.src, c.key
	}
	return out
}

// lateralFunction reports whether FROM item f is unnest or
// generate_series whose arguments read the items before it (left):
// Postgres's functions in FROM are implicitly LATERAL.
func (q *query) lateralFunction(f *pg_query.RangeFunction, left *relExpr) bool {
	fc := rangeFunctionCall(f)
	if fc == nil || (funcName(fc) != "unnest" && funcName(fc) != "generate_series") || len(f.Functions) != 1 {
		return false
	}
	defer q.hideOuter()()
	b := &binder{q: q, scope: left, clause: "functions in FROM"}
	for _, a := range fc.Args {
		if t, err := b.bind(a); err == nil && usesInput(t.d) {
			return true
		}
	}
	return false
}

// rangeFunctionCall is the one call of a FROM function item.
func rangeFunctionCall(f *pg_query.RangeFunction) *pg_query.FuncCall {
	if len(f.Functions) != 1 {
		return nil
	}
	items := f.Functions[0].GetList().GetItems()
	if len(items) == 0 {
		return nil
	}
	return items[0].GetFuncCall()
}

// joinLateralFunction joins FROM item f, a function reading acc's
// columns, onto acc.
func (q *query) joinLateralFunction(acc *relExpr, f *pg_query.RangeFunction) (*relExpr, error) {
	fc := rangeFunctionCall(f)
	b := &binder{q: q, scope: acc, clause: "functions in FROM"}
	args, typ, _, err := q.bindSRF(b, fc)
	if err != nil {
		return nil, err
	}
	out, _ := q.joinSRF(acc, f, funcName(fc), args, typ, false)
	return out, nil
}

// srfValue is what a call reads: the value, or _pg_expandarray's
// record (x, n).
func srfValue(name string, at int, typ types.Type) typed {
	x := typed{d: expr.Input(at, typ), t: typ}
	if name != "_pg_expandarray" {
		return x
	}
	n := typed{d: expr.Cast(expr.Input(at+1, types.TInt64), types.TInt32), t: types.TInt32}
	text := expr.Func("format", expr.Literal("(%s,%s)", types.TVarchar), x.d, n.d)
	text.Type = types.TVarchar
	return typed{d: text, t: types.TVarchar, fields: []field{{"x", x}, {"n", n}}}
}

// fieldOf selects field name of a record value.
func (b *binder) fieldOf(rec typed, name string, loc int32) (typed, error) {
	for _, f := range rec.fields {
		if f.name == name {
			return f.t, nil
		}
	}
	if rec.fields == nil {
		return typed{}, errAt(b.q.st, sqlerr.WrongObjectType, loc, "column notation .%s applied to type %s, which is not a composite type", name, rec.t)
	}
	return typed{}, errAt(b.q.st, sqlerr.UndefinedColumn, loc, "could not identify column %q in record data type", name)
}
