package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// functionScan binds unnest(array) or generate_series(start, stop[,
// step]) in a batch query's FROM as a function scan, whose arguments are
// evaluated when the query runs: they may read the enclosing query's row
// (an apply subquery's outer columns). generate_series with constant
// arguments and no ORDINALITY stays a list of values (ok false), which a
// streaming job can read too.
func (q *query) functionScan(f *pg_query.RangeFunction, fc *pg_query.FuncCall) (*relExpr, bool, error) {
	name := funcName(fc)
	b := &binder{q: q, clause: "functions in FROM"}
	args, typ, constant, err := q.bindSRF(b, fc)
	if err != nil {
		return nil, true, err
	}
	if name == "generate_series" && constant && !f.Ordinality {
		return nil, false, nil
	}
	descs := make([]expr.Desc, len(args))
	for i, a := range args {
		descs[i] = a.d
	}
	return q.funcRel(f, name, descs, typ), true, nil
}

// bindSRF binds the arguments of a call of unnest(array) or
// generate_series(start, stop[, step]) (the latter coerced to bigint)
// and returns its value type and whether the arguments are constant.
func (q *query) bindSRF(b *binder, fc *pg_query.FuncCall) ([]typed, types.Type, bool, error) {
	name := funcName(fc)
	args := make([]typed, len(fc.Args))
	constant := true
	for i, a := range fc.Args {
		t, err := b.bind(a)
		if err != nil {
			return nil, types.Type{}, false, err
		}
		args[i] = t
		if _, err := evalConst(t, t.t); err != nil {
			constant = false
		}
	}
	switch {
	case (name == "unnest" || name == "_pg_expandarray") && len(args) == 1:
		if args[0].t.ID == types.Unknown {
			return nil, types.Type{}, false, errAt(q.st, sqlerr.IndeterminateDatatype, fc.Location,
				"could not determine polymorphic type because input has type unknown")
		}
		if !args[0].t.IsArray() {
			return nil, types.Type{}, false, errAt(q.st, sqlerr.UndefinedFunction, fc.Location, "function %s(%s) does not exist", name, args[0].t)
		}
		return args, args[0].t.ElemType(), constant, nil
	case name == "generate_series" && (len(args) == 2 || len(args) == 3):
		typ := types.TInt32
		for i, a := range args {
			if !a.t.IsInteger() && a.t.ID != types.Unknown {
				return nil, types.Type{}, false, errAt(q.st, sqlerr.UndefinedFunction, fc.Location, "function generate_series(%s) is not supported", a.t)
			}
			if a.t.ID == types.Int64 {
				typ = types.TInt64
			}
			var err error
			if args[i], err = b.coerce(a, types.TInt64, location(fc.Args[i])); err != nil {
				return nil, types.Type{}, false, err
			}
		}
		return args, typ, constant, nil
	}
	return nil, types.Type{}, false, errAt(q.st, sqlerr.UndefinedFunction, fc.Location,
		"function %s with %d arguments is not supported as a set-returning function", name, len(args))
}

// funcRel is the relation of set-returning function name of args
// (expressions of no input column) as FROM item f has it: its value,
// of typ (generate_series computes in bigint, cast back here), and with
// ORDINALITY the position; named by the alias, else by the function.
// _pg_expandarray is unnest with the position.
func (q *query) funcRel(f *pg_query.RangeFunction, name string, args []expr.Desc, typ types.Type) *relExpr {
	qual := name
	if f.Alias != nil {
		qual = f.Alias.Aliasname
	}
	scan := &plan.FunctionScan{Name: name, Args: args, Ordinality: f.Ordinality}
	if name == "_pg_expandarray" {
		scan.Name, scan.Ordinality = "unnest", true
	}
	vt := typ
	if name == "generate_series" {
		vt = types.TInt64
	}
	schema := []types.Type{vt}
	if scan.Ordinality {
		schema = append(schema, types.TInt64)
	}
	r := &relExpr{node: &plan.Node{Kind: plan.KindFunctionScan, Schema: schema, StreamKey: []int{len(schema) - 1}, FunctionScan: scan}}
	outs := []outCol{{t: typed{d: expr.Cast(expr.Input(0, vt), typ), t: typ}, name: qual, qual: qual}}
	if scan.Ordinality {
		outs = append(outs, outCol{t: typed{d: expr.Input(1, types.TInt64), t: types.TInt64}, name: "ordinality", qual: qual})
	}
	for i, o := range outs {
		r.cols = append(r.cols, column{qual: qual, name: o.name, typ: schema[i]})
	}
	if vt != typ {
		r = q.project(r, outs, false)
	}
	if f.Alias != nil {
		for i, cn := range f.Alias.Colnames {
			if i < len(r.cols) {
				r.cols[i].name = cn.GetString_().Sval
			}
		}
	}
	return r
}
