package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// SQL functions: CREATE FUNCTION name(args) RETURNS type LANGUAGE SQL AS
// $$SELECT expression$$ (or RETURN expression). The body is one
// expression of the parameters (by name or $n); a call is inlined where it
// is planned, its arguments substituted, so it costs nothing at run time
// and a view keeps what the function meant when it was created. A
// built-in function of the same name and arguments wins, as pg_catalog's
// do in Postgres.

// CreateFunction is CREATE [OR REPLACE] FUNCTION.
type CreateFunction struct {
	Fn      catalog.Function
	Replace bool
}

// DropFunction is DROP FUNCTION.
type DropFunction struct {
	Names    []string
	IfExists bool
}

func (*CreateFunction) isResult() {}
func (*DropFunction) isResult()   {}

// maxInline bounds nested inlining (a function calling itself).
const maxInline = 32

func (p *Planner) createFunction(st *parser.Statement, cs *pg_query.CreateFunctionStmt) (Result, error) {
	q := &query{p: p, st: st}
	if cs.IsProcedure {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "procedures are not supported")
	}
	fn := catalog.Function{Name: lastName(cs.Funcname), Definition: st.SQL()}
	for _, n := range cs.Parameters {
		fp := n.GetFunctionParameter()
		if fp.Mode != pg_query.FunctionParameterMode_FUNC_PARAM_IN && fp.Mode != pg_query.FunctionParameterMode_FUNC_PARAM_DEFAULT {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "only IN parameters are supported")
		}
		if fp.Defexpr != nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "parameter defaults are not supported")
		}
		t, err := typeName(q, fp.ArgType)
		if err != nil {
			return nil, err
		}
		fn.Args = append(fn.Args, catalog.FuncArg{Name: fp.Name, Type: t})
	}
	if cs.ReturnType == nil {
		return nil, sqlerr.New(sqlerr.Code("42P13"), "function result type must be specified")
	}
	ret, err := typeName(q, cs.ReturnType)
	if err != nil {
		return nil, err
	}
	fn.Returns = ret
	body, err := functionBody(cs)
	if err != nil {
		return nil, err
	}
	if fn.Body, err = parser.DeparseExpr(body); err != nil {
		return nil, err
	}
	// Bind the body once over the parameters, so a broken body fails here.
	args := make([]typed, len(fn.Args))
	for i, a := range fn.Args {
		args[i] = typed{d: expr.Null(a.Type), t: a.Type}
	}
	if _, err := q.inline(nil, fn, args, -1); err != nil {
		return nil, err
	}
	return &CreateFunction{Fn: fn, Replace: cs.Replace}, nil
}

// functionBody returns the expression of a LANGUAGE SQL body:
// AS 'SELECT expression' or RETURN expression.
func functionBody(cs *pg_query.CreateFunctionStmt) (*pg_query.Node, error) {
	var text string
	lang := ""
	for _, o := range cs.Options {
		d := o.GetDefElem()
		switch d.GetDefname() {
		case "language":
			lang = strings.ToLower(d.Arg.GetString_().GetSval())
		case "as":
			if l := d.Arg.GetList(); l != nil && len(l.Items) == 1 {
				text = l.Items[0].GetString_().GetSval()
			}
		case "strict":
			if d.Arg.GetBoolean().GetBoolval() {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported,
					"STRICT (RETURNS NULL ON NULL INPUT) is not supported: a call is inlined; handle NULLs in the body")
			}
		}
	}
	if r := cs.SqlBody.GetReturnStmt(); r != nil {
		return r.Returnval, nil
	}
	if lang != "sql" {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "only LANGUAGE SQL functions are supported, not %q", lang)
	}
	tree, err := pg_query.Parse(text)
	bad := sqlerr.New(sqlerr.FeatureNotSupported, "a SQL function body must be one SELECT of one expression, with no FROM")
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.SyntaxError, "function body: %v", err)
	}
	if len(tree.Stmts) != 1 {
		return nil, bad
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 || sel.WhereClause != nil ||
		len(sel.GroupClause) > 0 || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return nil, bad
	}
	return sel.TargetList[0].GetResTarget().Val, nil
}

func lastName(ns []*pg_query.Node) string {
	if len(ns) == 0 {
		return ""
	}
	return ns[len(ns)-1].GetString_().GetSval()
}

func (p *Planner) dropFunction(ds *pg_query.DropStmt) (Result, error) {
	d := &DropFunction{IfExists: ds.MissingOk}
	if ds.Behavior == pg_query.DropBehavior_DROP_CASCADE {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DROP FUNCTION … CASCADE is not supported: calls are inlined, nothing depends on a function")
	}
	q := &query{p: p}
	for _, o := range ds.Objects {
		ow := o.GetObjectWithArgs()
		if ow == nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DROP FUNCTION needs a function name")
		}
		name := lastName(ow.Objname)
		if fn, ok := p.cat.Function(name); ok && !ow.ArgsUnspecified && !q.sameArgs(fn, ow.Objargs) {
			return nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with these argument types does not exist", name)
		}
		d.Names = append(d.Names, name)
	}
	return d, nil
}

// sameArgs reports whether fn takes the argument types named.
func (q *query) sameArgs(fn catalog.Function, args []*pg_query.Node) bool {
	if len(args) != len(fn.Args) {
		return false
	}
	for i, a := range args {
		t, err := typeName(q, a.GetTypeName())
		if err != nil || t != fn.Args[i].Type {
			return false
		}
	}
	return true
}

// userFunction inlines a call of a SQL function, when name is one and no
// built-in takes these arguments.
func (b *binder) userFunction(name string, args []typed, loc int32) (typed, bool, error) {
	fn, ok := b.q.p.cat.Function(name)
	if !ok || len(fn.Args) != len(args) {
		return typed{}, false, nil
	}
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.t
	}
	if _, err := expr.ResolveFunc(name, ts); err == nil {
		return typed{}, false, nil
	}
	coerced := make([]typed, len(args))
	for i, a := range args {
		c, err := b.coerce(a, fn.Args[i].Type, loc)
		if err != nil {
			return typed{}, true, err
		}
		if hasVolatile(c.d) && paramUses(fn, i) > 1 {
			return typed{}, true, errAt(b.q.st, sqlerr.FeatureNotSupported, loc,
				"function %s uses its parameter %d more than once; a volatile argument (random()) would be evaluated each time", fn.Name, i+1)
		}
		coerced[i] = c
	}
	t, err := b.q.inline(b, fn, coerced, loc)
	return t, true, err
}

// paramUses counts the references to parameter i in fn's body.
func paramUses(fn catalog.Function, i int) int {
	body, err := parser.ParseExpr(fn.Body)
	if err != nil {
		return 0
	}
	n := 0
	walkNodes(body, func(x any) bool {
		switch x := x.(type) {
		case *pg_query.ParamRef:
			if int(x.Number) == i+1 {
				n++
			}
		case *pg_query.ColumnRef:
			if len(x.Fields) == 1 && fn.Args[i].Name != "" && x.Fields[0].GetString_().GetSval() == fn.Args[i].Name {
				n++
			}
		}
		return true
	})
	return n
}

// inline binds fn's body with its parameters standing for args (bound by
// caller, nil when checking a definition), as fn's return type. The body
// sees its parameters only, never the caller's columns.
func (q *query) inline(caller *binder, fn catalog.Function, args []typed, loc int32) (typed, error) {
	if q.inlining >= maxInline {
		return typed{}, errAt(q.st, sqlerr.Code("54001"), loc, "function %s calls itself too deeply", fn.Name)
	}
	q.inlining++
	defer func() { q.inlining-- }()
	body, err := parser.ParseExpr(fn.Body)
	if err != nil {
		return typed{}, err
	}
	b := &binder{q: q, clause: "a function body"}
	if caller != nil {
		// The arguments are expressions over the caller's input.
		b.scope, b.schema = caller.scope, caller.schema
	}
	b.hook = func(n *pg_query.Node) (typed, bool, error) {
		if p := n.GetParamRef(); p != nil && p.Number >= 1 && int(p.Number) <= len(args) {
			return args[p.Number-1], true, nil
		}
		if cr := n.GetColumnRef(); cr != nil {
			_, name, _ := columnName(cr)
			for i, a := range fn.Args {
				if a.Name != "" && a.Name == name && len(cr.Fields) == 1 {
					return args[i], true, nil
				}
			}
			return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q does not exist", name)
		}
		return typed{}, false, nil
	}
	t, err := b.bind(body)
	if err != nil {
		if q.inlining > 1 {
			return typed{}, err
		}
		return typed{}, sqlerr.Errorf(sqlerr.CodeOf(err), "in function %s: %v", fn.Name, err)
	}
	if t.t != fn.Returns {
		if _, ok := expr.CommonType(t.t, fn.Returns); !ok && t.t.ID != types.Unknown {
			return typed{}, sqlerr.Errorf(sqlerr.Code("42P13"),
				"return type mismatch in function %s: the body is %s, declared %s", fn.Name, t.t, fn.Returns)
		}
		return b.coerce(t, fn.Returns, loc)
	}
	return t, nil
}
