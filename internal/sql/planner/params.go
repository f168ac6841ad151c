package planner

import (
	"fmt"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A prepared statement is planned once, with its parameters $1…$n bound
// as expr.KindParam nodes. A parameter the client gave no type is typed
// where it is first used, as Postgres types an untyped literal: by the
// column it is compared with or assigned to, by a cast, by the function
// or operator that takes it; one still untyped at the end is text. Bind
// then turns the plan into an ordinary one for each execution, replacing
// every parameter by its value (no parsing, no planning).

// maxParams is Postgres's limit on a statement's parameters.
const maxParams = 65535

// paramSet is the parameter types of the statement being planned.
type paramSet struct {
	ts []types.Type
}

// PlanPrepared plans st as a prepared statement: SELECT, INSERT, UPDATE
// and DELETE, whose parameters it binds. declared has the types the client
// gave (Unknown or missing where it gave none). It returns the plan and
// the type of every parameter; ok is false (and nothing is planned) for
// other statements, which the session runs itself.
func (p *Planner) PlanPrepared(st *parser.Statement, declared []types.Type) (res Result, params []types.Type, ok bool, err error) {
	if st.Kind != parser.KindStandard || st.Node == nil {
		return nil, nil, false, nil
	}
	ps := &paramSet{ts: append([]types.Type(nil), declared...)}
	p.reads = nil
	switch n := st.Node.Node.(type) {
	case *pg_query.Node_SelectStmt:
		res, err = p.query(st, n.SelectStmt, ps)
	case *pg_query.Node_InsertStmt:
		res, err = p.insert(st, n.InsertStmt, ps)
	case *pg_query.Node_UpdateStmt:
		res, err = p.update(st, n.UpdateStmt, ps)
	case *pg_query.Node_DeleteStmt:
		res, err = p.delete(st, n.DeleteStmt, ps)
	default:
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, true, err
	}
	for i, t := range ps.ts {
		if t.ID == types.Unknown {
			ps.ts[i] = types.TVarchar
		}
	}
	return res, ps.ts, true, nil
}

// param binds $n.
func (b *binder) param(r *pg_query.ParamRef) (typed, error) {
	n := int(r.Number)
	ps := b.q.params
	if ps == nil || n < 1 || n > maxParams {
		return typed{}, errAt(b.q.st, sqlerr.Code("42P02"), r.Location, "there is no parameter $%d", n)
	}
	for len(ps.ts) < n {
		ps.ts = append(ps.ts, types.TUnknown)
	}
	t := ps.ts[n-1]
	return typed{d: expr.Param(n, t), t: t}, nil
}

// typeParam gives t, when it is a parameter not typed yet, the type to:
// from here on every use of it has that type.
func (b *binder) typeParam(t typed, to types.Type) (typed, bool) {
	if t.d.Kind != expr.KindParam || t.t.ID != types.Unknown || to.ID == types.Unknown || b.q.params == nil {
		return t, false
	}
	b.q.params.ts[t.d.Index-1] = to
	return typed{d: expr.Param(t.d.Index, to), t: to}, true
}

// typeCallParams types the untyped parameters among a call's arguments
// by the parameters of the overload the call resolves to.
func (b *binder) typeCallParams(name string, args []typed) {
	var ts []types.Type
	for i, a := range args {
		if a.d.Kind != expr.KindParam || a.t.ID != types.Unknown {
			continue
		}
		if ts == nil {
			all := make([]types.Type, len(args))
			for j := range args {
				all[j] = args[j].t
			}
			var err error
			if ts, err = expr.ResolveArgs(name, all); err != nil {
				return // the caller reports it
			}
		}
		args[i], _ = b.typeParam(a, ts[i])
	}
}

// Bind returns the plan res with params (one per parameter type ts, nil
// for NULL) in place of its parameters, ready to execute; res itself is
// not changed, so it can be bound again. now is the statement's time, for
// the VALUES cells evaluated here.
func Bind(res Result, ts []types.Type, params []types.Datum, now types.DTimestamptz) (Result, error) {
	bind := func(d expr.Desc) expr.Desc { return expr.BindParams(d, ts, params) }
	switch r := res.(type) {
	case *Query:
		return bindQuery(r, bind), nil
	case *Update:
		return &Update{Table: r.Table, Query: bindQuery(r.Query, bind), Returning: bindReturning(r.Returning, bind)}, nil
	case *Delete:
		return &Delete{Table: r.Table, Query: bindQuery(r.Query, bind), Returning: bindReturning(r.Returning, bind)}, nil
	case *Insert:
		return bindInsert(r, ts, params, now, bind)
	}
	return res, nil
}

func bindQuery(q *Query, bind func(expr.Desc) expr.Desc) *Query {
	if q == nil {
		return nil
	}
	out := *q
	out.Plan = plan.MapExprs(q.Plan, bind)
	return &out
}

// Cell is one deferred VALUES cell of an Insert: Rows[Row][Col] is Value,
// of type From, assigned to the column's type To.
type Cell struct {
	Row, Col int
	Value    expr.Desc
	From, To types.Type
}

// deferred reports whether a VALUES cell or default of a prepared
// statement must wait for its execution: anything but a literal may
// depend on a parameter or on now().
func (q *query) deferred(t typed) bool {
	return q.params != nil && t.d.Kind != expr.KindLiteral
}

// deferDefaults returns the deferred cells of row's defaults.
func (q *query) deferDefaults(row int, given []bool, defs []*typed) []Cell {
	var out []Cell
	for k, t := range defs {
		if t != nil && !given[k] && q.deferred(*t) {
			out = append(out, Cell{Row: row, Col: k, Value: t.d, From: t.t, To: t.t})
		}
	}
	return out
}

// bindInsert evaluates the deferred cells into a copy of the rows.
func bindInsert(ins *Insert, ts []types.Type, params []types.Datum, now types.DTimestamptz, bind func(expr.Desc) expr.Desc) (*Insert, error) {
	out := *ins
	out.Query = bindQuery(ins.Query, bind)
	out.Returning = bindReturning(ins.Returning, bind)
	if ins.OnConflict != nil {
		oc := *ins.OnConflict
		oc.Set = make([]*expr.Desc, len(ins.OnConflict.Set))
		for i, d := range ins.OnConflict.Set {
			if d != nil {
				b := bind(*d)
				oc.Set[i] = &b
			}
		}
		if oc.Where != nil {
			w := bind(*oc.Where)
			oc.Where = &w
		}
		out.OnConflict = &oc
	}
	if len(ins.Deferred) == 0 {
		return &out, nil
	}
	out.Rows = make([]types.Row, len(ins.Rows))
	for i, r := range ins.Rows {
		out.Rows[i] = slices.Clone(r)
	}
	out.Deferred = nil
	for _, c := range ins.Deferred {
		d, err := cellValue(c, ts, params, now, bind)
		if err != nil {
			return nil, err
		}
		out.Rows[c.Row][c.Col] = d
	}
	return &out, nil
}

// cellValue evaluates one deferred cell; a bare parameter of the column's
// type is its value as bound.
func cellValue(c Cell, ts []types.Type, params []types.Datum, now types.DTimestamptz, bind func(expr.Desc) expr.Desc) (types.Datum, error) {
	if v := c.Value; v.Kind == expr.KindParam && v.Index >= 1 && v.Index <= len(params) && ts[v.Index-1] == c.To {
		return params[v.Index-1], nil
	}
	return evalConstAt(typed{d: bind(c.Value), t: c.From}, c.To, now)
}

// ParamValues evaluates EXECUTE's argument expressions as constants of
// the prepared statement's parameter types ts.
func (p *Planner) ParamValues(st *parser.Statement, args []*pg_query.Node, ts []types.Type, name string) ([]types.Datum, error) {
	if len(args) != len(ts) {
		e := sqlerr.Errorf(sqlerr.SyntaxError, "wrong number of parameters for prepared statement \"%s\"", name)
		e.Detail = fmt.Sprintf("Expected %d parameters but got %d.", len(ts), len(args))
		return nil, e
	}
	q := &query{p: p, st: st}
	b := &binder{q: q, clause: "EXECUTE parameter"}
	out := make([]types.Datum, len(args))
	for i, a := range args {
		t, err := b.bind(a)
		if err != nil {
			return nil, err
		}
		if t, err = b.assign(t, catalog.Column{Name: fmt.Sprintf("$%d", i+1), Type: ts[i]}, location(a)); err != nil {
			return nil, err
		}
		if out[i], err = q.evalConst(t, ts[i]); err != nil {
			return nil, withPos(st, err, location(a))
		}
	}
	return out, nil
}

// ParamTypes resolves PREPARE's declared parameter types.
func (p *Planner) ParamTypes(st *parser.Statement, names []*pg_query.Node) ([]types.Type, error) {
	q := &query{p: p, st: st}
	out := make([]types.Type, len(names))
	for i, n := range names {
		t, err := typeName(q, n.GetTypeName())
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}
