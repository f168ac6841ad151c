package planner

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// typed is a bound expression and its type.
type typed struct {
	d expr.Desc
	t types.Type
	// reg is the reg* type (regclass, …) of an oid, shown as a name
	// (regtype.go); empty for every other value.
	reg string
	// fields are the fields of a record (srf.go); nil for other values.
	fields []field
}

// binder turns pg_query expressions into expr.Desc over the columns of
// scope. hook, when set, sees every node first (aggregate scopes use it to
// map aggregate calls and grouped expressions onto the agg's output).
type binder struct {
	q     *query
	scope *relExpr
	// schema returns the types Input(i) refers to; nil means scope's.
	schema func() []types.Type
	hook   func(n *pg_query.Node) (typed, bool, error)
	// grouped, set above a GROUP BY, finds scope column i among the
	// group keys, so that SELECT * can expand to grouped columns.
	grouped func(i int) (typed, bool)
	// clause names where aggregates are not allowed ("WHERE", …); empty
	// when the hook handles them.
	clause string
}

func (b *binder) types() []types.Type {
	if b.schema != nil {
		return b.schema()
	}
	if b.scope == nil {
		return nil
	}
	ts := make([]types.Type, len(b.scope.cols))
	for i, c := range b.scope.cols {
		ts[i] = c.typ
	}
	return ts
}

func (b *binder) bind(n *pg_query.Node) (typed, error) {
	if b.hook != nil {
		if t, ok, err := b.hook(n); ok || err != nil {
			return t, err
		}
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		return b.columnRef(x.ColumnRef)
	case *pg_query.Node_AConst:
		return b.constant(x.AConst)
	case *pg_query.Node_TypeCast:
		return b.typeCast(x.TypeCast)
	case *pg_query.Node_AExpr:
		return b.aExpr(x.AExpr)
	case *pg_query.Node_BoolExpr:
		return b.boolExpr(x.BoolExpr)
	case *pg_query.Node_NullTest:
		k := expr.KindIsNull
		if x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL {
			k = expr.KindIsNotNull
		}
		return b.node(k, x.NullTest.Location, x.NullTest.Arg)
	case *pg_query.Node_BooleanTest:
		return b.booleanTest(x.BooleanTest)
	case *pg_query.Node_FuncCall:
		return b.funcCall(x.FuncCall)
	case *pg_query.Node_CaseExpr:
		return b.caseExpr(x.CaseExpr)
	case *pg_query.Node_CoalesceExpr:
		return b.unified(expr.KindCoalesce, "COALESCE", x.CoalesceExpr.Location, x.CoalesceExpr.Args)
	case *pg_query.Node_MinMaxExpr:
		k, name := expr.KindGreatest, "GREATEST"
		if x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			k, name = expr.KindLeast, "LEAST"
		}
		return b.unified(k, name, x.MinMaxExpr.Location, x.MinMaxExpr.Args)
	case *pg_query.Node_SqlvalueFunction:
		return b.sqlValue(x.SqlvalueFunction)
	case *pg_query.Node_AArrayExpr:
		return b.arrayExpr(x.AArrayExpr, types.TUnknown)
	case *pg_query.Node_AIndirection:
		return b.indirection(x.AIndirection)
	case *pg_query.Node_SubLink:
		return b.bindSubLink(x.SubLink)
	case *pg_query.Node_ParamRef:
		return b.param(x.ParamRef)
	case *pg_query.Node_CollateClause:
		return b.collate(x.CollateClause)
	}
	return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, location(n), "expression not supported: %s", nodeName(n))
}

func (b *binder) columnRef(c *pg_query.ColumnRef) (typed, error) {
	qual, name, star := columnName(c)
	if star {
		return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, c.Location, "* is not allowed here")
	}
	i, err := b.q.resolve(b.scope, qual, name, c.Location)
	if code := sqlerr.CodeOf(err); code == sqlerr.UndefinedColumn || code == sqlerr.UndefinedTable {
		if t, ok := b.outerColumn(qual, name, c.Location); ok {
			return t, nil
		}
		if b.fartherColumn(qual, name, c.Location) {
			return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, c.Location,
				"a subquery may refer to the query around it, but not to one further out (%s)", name)
		}
	}
	if err != nil {
		return typed{}, err
	}
	t := b.scope.cols[i].typ
	return typed{d: expr.Input(i, t), t: t}, nil
}

// columnName splits a column reference into qualifier and name; the
// schema part of schema.table.column is dropped.
func columnName(c *pg_query.ColumnRef) (qual, name string, star bool) {
	var parts []string
	for _, f := range c.Fields {
		if f.GetAStar() != nil {
			star = true
			continue
		}
		parts = append(parts, f.GetString_().Sval)
	}
	switch len(parts) {
	case 0:
	case 1:
		if star {
			qual = parts[0]
		} else {
			name = parts[0]
		}
	default:
		if star {
			qual = parts[len(parts)-1]
		} else {
			qual, name = parts[len(parts)-2], parts[len(parts)-1]
		}
	}
	return qual, name, star
}

func lit(text string, t types.Type) typed {
	return typed{d: expr.Desc{Kind: expr.KindLiteral, Type: t, Value: &text}, t: t}
}

func (b *binder) constant(c *pg_query.A_Const) (typed, error) {
	if c.Isnull {
		return typed{d: expr.Null(types.TUnknown), t: types.TUnknown}, nil
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return lit(strconv.FormatInt(int64(v.Ival.Ival), 10), types.TInt32), nil
	case *pg_query.A_Const_Fval:
		s := v.Fval.Fval
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return lit(s, types.TInt64), nil
		}
		if _, err := types.ParseDatum(s, types.TDecimal); err != nil {
			return typed{}, withPos(b.q.st, err, c.Location)
		}
		return lit(s, types.TDecimal), nil
	case *pg_query.A_Const_Boolval:
		return lit(strconv.FormatBool(v.Boolval.Boolval), types.TBool), nil
	case *pg_query.A_Const_Sval:
		return lit(v.Sval.Sval, types.TUnknown), nil
	}
	return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, c.Location, "constant not supported")
}

// typeName resolves a pg_query type name; parameters (varchar(n),
// numeric(p,s)) and array bounds (int[3]) are accepted and not kept, as
// Postgres does not enforce them either.
func typeName(q *query, tn *pg_query.TypeName) (types.Type, error) {
	if len(tn.ArrayBounds) > 1 {
		return types.Type{}, errAt(q.st, sqlerr.FeatureNotSupported, tn.Location, "multidimensional arrays are not supported")
	}
	var name string
	if len(tn.Names) > 0 {
		name = tn.Names[len(tn.Names)-1].GetString_().Sval
	}
	if strings.EqualFold(name, "oid") {
		name = "bigint" // an oid is a bigint in Sluice (regtype.go)
	}
	if t, ok := types.ParseTypeName(strings.ToLower(name)); ok {
		if len(tn.ArrayBounds) == 0 {
			return t, nil
		}
		if t.IsArray() || t.ID == types.Unknown {
			return types.Type{}, errAt(q.st, sqlerr.FeatureNotSupported, tn.Location, "multidimensional arrays are not supported")
		}
		return types.ArrayOf(t), nil
	}
	return types.Type{}, errAt(q.st, sqlerr.UndefinedObject, tn.Location, "type %q does not exist", name)
}

func (b *binder) typeCast(c *pg_query.TypeCast) (typed, error) {
	if kind, ok := regKindOf(c.TypeName); ok {
		return b.regCast(c, kind)
	}
	to, err := typeName(b.q, c.TypeName)
	if err != nil {
		return typed{}, err
	}
	mod, err := typeModifier(b.q, c.TypeName, to)
	if err != nil {
		return typed{}, err
	}
	if t, ok, err := b.qualifiedInterval(c, to, mod); ok || err != nil {
		return t, err
	}
	t, err := b.castTo(c, to)
	if err != nil || mod == nil {
		return t, err
	}
	return b.check(withModifier(t, mod).d, c.Location)
}

func (b *binder) castTo(c *pg_query.TypeCast, to types.Type) (typed, error) {
	if a, ok := isArrayExpr(c.Arg); ok && to.IsArray() {
		// ARRAY[...]::t[] types the elements (and allows ARRAY[]).
		return b.arrayExpr(a, to)
	}
	arg, err := b.bind(c.Arg)
	if err != nil {
		return typed{}, err
	}
	if arg.reg != "" {
		if to == types.TVarchar {
			return b.regName(arg, c.Location)
		}
		arg.reg = "" // 'items'::regclass::oid is the number
	}
	if p, ok := b.typeParam(arg, to); ok {
		return p, nil
	}
	// A typed literal ('1 day'::interval, DATE '2024-01-01') is parsed now,
	// so a bad one is an error at plan time with its position.
	if arg.d.Kind == expr.KindLiteral && arg.t.ID == types.Unknown {
		if arg.d.Value == nil {
			return typed{d: expr.Null(to), t: to}, nil
		}
		d, err := types.ParseDatum(*arg.d.Value, to)
		if err != nil {
			return typed{}, withPos(b.q.st, err, location(c.Arg))
		}
		return typed{d: expr.Literal(d, to), t: to}, nil
	}
	if arg.t == to {
		return arg, nil
	}
	if !expr.CanCast(arg.t, to) {
		return typed{}, errAt(b.q.st, sqlerr.CannotCoerce, c.Location, "cannot cast type %s to %s", arg.t, to)
	}
	return typed{d: expr.Cast(arg.d, to), t: to}, nil
}

// check builds d to learn its type, turning a failure into a user error
// at loc.
func (b *binder) check(d expr.Desc, loc int32) (typed, error) {
	e, err := expr.Build(d, b.types())
	if err != nil {
		if sqlerr.CodeOf(err) == sqlerr.Internal {
			err = sqlerr.Errorf(sqlerr.DatatypeMismatch, "%s", strings.TrimPrefix(err.Error(), "expr: malformed expression: "))
		}
		return typed{}, withPos(b.q.st, err, loc)
	}
	d.Type = e.Type()
	return typed{d: d, t: e.Type()}, nil
}

// node binds args and builds a node of kind k over them.
func (b *binder) node(k expr.Kind, loc int32, args ...*pg_query.Node) (typed, error) {
	ds, _, err := b.bindAll(args)
	if err != nil {
		return typed{}, err
	}
	return b.check(expr.Node(k, ds...), loc)
}

func (b *binder) bindAll(ns []*pg_query.Node) ([]expr.Desc, []types.Type, error) {
	ds := make([]expr.Desc, len(ns))
	ts := make([]types.Type, len(ns))
	for i, n := range ns {
		t, err := b.bind(n)
		if err != nil {
			return nil, nil, err
		}
		ds[i], ts[i] = t.d, t.t
	}
	return ds, ts, nil
}

// call resolves function or operator name over args.
func (b *binder) call(name string, loc int32, args ...typed) (typed, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.t
	}
	if _, err := expr.ResolveFunc(name, ts); err != nil {
		return typed{}, withPos(b.q.st, err, loc)
	}
	if err := b.refuseSessionFunc(name, loc); err != nil {
		return typed{}, err
	}
	b.typeCallParams(name, args)
	ds := make([]expr.Desc, len(args))
	for i, a := range args {
		ds[i] = a.d
	}
	return b.check(expr.Func(name, ds...), loc)
}

func (b *binder) booleanTest(t *pg_query.BooleanTest) (typed, error) {
	kinds := map[pg_query.BoolTestType]expr.Kind{
		pg_query.BoolTestType_IS_TRUE: expr.KindIsTrue, pg_query.BoolTestType_IS_NOT_TRUE: expr.KindIsNotTrue,
		pg_query.BoolTestType_IS_FALSE: expr.KindIsFalse, pg_query.BoolTestType_IS_NOT_FALSE: expr.KindIsNotFalse,
		pg_query.BoolTestType_IS_UNKNOWN: expr.KindIsNull, pg_query.BoolTestType_IS_NOT_UNKNOWN: expr.KindIsNotNull,
	}
	arg, err := b.boolArg(t.Arg, "IS TRUE")
	if err != nil {
		return typed{}, err
	}
	return b.check(expr.Node(kinds[t.Booltesttype], arg.d), t.Location)
}

// boolArg binds n and requires it to be boolean (an unknown literal is
// read as one).
func (b *binder) boolArg(n *pg_query.Node, what string) (typed, error) {
	t, err := b.bind(n)
	if err != nil {
		return typed{}, err
	}
	return b.coerceBool(t, n, what)
}

func (b *binder) coerceBool(t typed, n *pg_query.Node, what string) (typed, error) {
	switch t.t.ID {
	case types.Bool:
		return t, nil
	case types.Unknown:
		return b.coerce(t, types.TBool, location(n))
	}
	return typed{}, errAt(b.q.st, sqlerr.DatatypeMismatch, location(n), "argument of %s must be type boolean, not type %s", what, t.t)
}

// coerce converts t to type to: literals are re-typed, other values cast.
func (b *binder) coerce(t typed, to types.Type, loc int32) (typed, error) {
	if t.t == to {
		return t, nil
	}
	if p, ok := b.typeParam(t, to); ok {
		return p, nil
	}
	if t.d.Kind == expr.KindLiteral && t.t.ID == types.Unknown {
		if t.d.Value == nil {
			return typed{d: expr.Null(to), t: to}, nil
		}
		d, err := types.ParseDatum(*t.d.Value, to)
		if err != nil {
			return typed{}, withPos(b.q.st, err, loc)
		}
		return typed{d: expr.Literal(d, to), t: to}, nil
	}
	return typed{d: expr.Cast(t.d, to), t: to}, nil
}

func (b *binder) boolExpr(e *pg_query.BoolExpr) (typed, error) {
	k, what := expr.KindAnd, "AND"
	switch e.Boolop {
	case pg_query.BoolExprType_OR_EXPR:
		k, what = expr.KindOr, "OR"
	case pg_query.BoolExprType_NOT_EXPR:
		k, what = expr.KindNot, "NOT"
	}
	args := make([]expr.Desc, len(e.Args))
	for i, a := range e.Args {
		t, err := b.boolArg(a, what)
		if err != nil {
			return typed{}, err
		}
		args[i] = t.d
	}
	return boolNode(k, args...), nil
}

// boolNode builds a boolean connective with its type declared.
func boolNode(k expr.Kind, args ...expr.Desc) typed {
	d := expr.Node(k, args...)
	d.Type = types.TBool
	return typed{d: d, t: types.TBool}
}

func (b *binder) caseExpr(c *pg_query.CaseExpr) (typed, error) {
	var ds []expr.Desc
	var results []typed
	var resultNodes []*pg_query.Node
	k := expr.KindCase
	if c.Arg != nil {
		k = expr.KindSimpleCase
		t, err := b.bind(c.Arg)
		if err != nil {
			return typed{}, err
		}
		ds = append(ds, t.d)
	}
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		var cond typed
		var err error
		if c.Arg != nil {
			cond, err = b.bind(cw.Expr)
		} else {
			cond, err = b.boolArg(cw.Expr, "CASE/WHEN")
		}
		if err != nil {
			return typed{}, err
		}
		res, err := b.bind(cw.Result)
		if err != nil {
			return typed{}, err
		}
		ds = append(ds, cond.d, expr.Desc{})
		results = append(results, res)
		resultNodes = append(resultNodes, cw.Result)
	}
	if c.Defresult != nil {
		res, err := b.bind(c.Defresult)
		if err != nil {
			return typed{}, err
		}
		ds = append(ds, expr.Desc{})
		results = append(results, res)
		resultNodes = append(resultNodes, c.Defresult)
	}
	unified, err := b.unify("CASE", results, resultNodes)
	if err != nil {
		return typed{}, err
	}
	j := 0
	for i := range ds {
		if ds[i].Kind == "" {
			ds[i] = unified[j].d
			j++
		}
	}
	return b.check(expr.Node(k, ds...), c.Location)
}

// unify converts ts to their common type (text when all are unknown), as
// Postgres does for CASE, COALESCE and UNION.
func (b *binder) unify(what string, ts []typed, nodes []*pg_query.Node) ([]typed, error) {
	common := types.TUnknown
	for i, t := range ts {
		c, ok := expr.CommonType(common, t.t)
		if !ok {
			return nil, errAt(b.q.st, sqlerr.DatatypeMismatch, location(nodes[i]), "%s types %s and %s cannot be matched", what, common, t.t)
		}
		common = c
	}
	if common.ID == types.Unknown {
		common = types.TVarchar
	}
	out := make([]typed, len(ts))
	for i, t := range ts {
		c, err := b.coerce(t, common, location(nodes[i]))
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func (b *binder) unified(k expr.Kind, what string, loc int32, args []*pg_query.Node) (typed, error) {
	ts := make([]typed, len(args))
	for i, a := range args {
		t, err := b.bind(a)
		if err != nil {
			return typed{}, err
		}
		ts[i] = t
	}
	u, err := b.unify(what, ts, args)
	if err != nil {
		return typed{}, err
	}
	ds := make([]expr.Desc, len(u))
	for i := range u {
		ds[i] = u[i].d
	}
	return b.check(expr.Node(k, ds...), loc)
}

func (b *binder) sqlValue(f *pg_query.SQLValueFunction) (typed, error) {
	switch f.Op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return b.call("now", f.Location)
	}
	if name, ok := sessionValues[f.Op]; ok {
		return b.call(name, f.Location)
	}
	return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, f.Location, "%s is not supported", strings.TrimPrefix(f.Op.String(), "SVFOP_"))
}

// sessionValues are the SQL-standard session values, by their
// functions' names.
var sessionValues = map[pg_query.SQLValueFunctionOp]string{
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER: "current_user", pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE: "current_role",
	pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER: "session_user", pg_query.SQLValueFunctionOp_SVFOP_USER: "user",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG: "current_catalog", pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA: "current_schema",
}

// location returns a node's Location, or -1.
func location(n *pg_query.Node) int32 {
	if n == nil {
		return -1
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		return x.ColumnRef.Location
	case *pg_query.Node_AConst:
		return x.AConst.Location
	case *pg_query.Node_TypeCast:
		if l := location(x.TypeCast.Arg); l >= 0 {
			return l
		}
		return x.TypeCast.Location
	case *pg_query.Node_AExpr:
		if l := location(x.AExpr.Lexpr); l >= 0 {
			return l
		}
		return x.AExpr.Location
	case *pg_query.Node_FuncCall:
		return x.FuncCall.Location
	case *pg_query.Node_AArrayExpr:
		return x.AArrayExpr.Location
	case *pg_query.Node_AIndirection:
		return location(x.AIndirection.Arg)
	case *pg_query.Node_BoolExpr:
		return x.BoolExpr.Location
	case *pg_query.Node_CaseExpr:
		return x.CaseExpr.Location
	case *pg_query.Node_NullTest:
		return location(x.NullTest.Arg)
	case *pg_query.Node_RangeVar:
		return x.RangeVar.Location
	case *pg_query.Node_JoinExpr:
		return location(x.JoinExpr.Larg)
	case *pg_query.Node_RangeSubselect:
		return location(x.RangeSubselect.Subquery)
	case *pg_query.Node_SelectStmt:
		if len(x.SelectStmt.TargetList) > 0 {
			return x.SelectStmt.TargetList[0].GetResTarget().Location
		}
	}
	return -1
}
