package expr

import (
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Session answers the functions that read the session or the system
// catalog: version(), current_user, current_setting, format_type,
// pg_get_userbyid, has_table_privilege, … (the list is sessionFuncs). A
// batch query's Context carries one (package pgcatalog implements the
// functions over the session's view of the catalog); a streaming job has
// none, and the planner refuses these calls there, since what they
// return is not a function of the rows.
type Session interface {
	// Call evaluates name on args, none of them NULL unless the function
	// is non-strict (sessionFunc.lax). The result must be a datum of the
	// function's result type, or nil.
	Call(name string, args []types.Datum) (types.Datum, error)
}

// sessionFunc is the signature of one overload of a session function.
type sessionFunc struct {
	name   string
	params []types.Type
	ret    types.Type
	// lax: NULL arguments are passed to Call instead of making the result
	// NULL (format_type's typmod, current_setting's missing_ok).
	lax bool
}

// sessionFuncs lists the session functions. An oid is a bigint here.
var sessionFuncs = func() []sessionFunc {
	b, i4, i8, t, ta := types.TBool, types.TInt32, types.TInt64, types.TVarchar, types.ArrayOf(types.TVarchar)
	f := func(name string, ret types.Type, params ...types.Type) sessionFunc {
		return sessionFunc{name: name, params: params, ret: ret}
	}
	out := []sessionFunc{
		f("version", t), f("current_database", t), f("current_catalog", t), f("current_schema", t),
		f("current_user", t), f("session_user", t), f("current_role", t), f("user", t),
		f("current_schemas", ta, b), f("pg_backend_pid", i4), f("pg_is_in_recovery", b), f("txid_current", i8),
		f("current_setting", t, t), {name: "current_setting", params: []types.Type{t, b}, ret: t, lax: true},
		{name: "set_config", params: []types.Type{t, t, b}, ret: t, lax: true},
		f("pg_cancel_backend", b, i4), f("pg_terminate_backend", b, i4), f("pg_postmaster_start_time", types.TTimestamptz),
		{name: "format_type", params: []types.Type{i8, i4}, ret: t, lax: true},
		f("pg_get_userbyid", t, i8), f("pg_table_is_visible", b, i8), f("pg_type_is_visible", b, i8),
		f("pg_function_is_visible", b, i8), f("pg_get_expr", t, t, i8), f("pg_get_expr", t, t, i8, b),
		f("pg_get_constraintdef", t, i8), f("pg_get_constraintdef", t, i8, b),
		f("pg_get_viewdef", t, i8), f("pg_get_viewdef", t, i8, b), f("pg_get_viewdef", t, t), f("pg_get_viewdef", t, t, b),
		f("pg_get_indexdef", t, i8), f("pg_get_indexdef", t, i8, i4, b), f("pg_get_partkeydef", t, i8),
		f("pg_get_triggerdef", t, i8), f("pg_get_triggerdef", t, i8, b), f("pg_get_ruledef", t, i8), f("pg_get_ruledef", t, i8, b),
		f("pg_get_statisticsobjdef_columns", t, i8), f("pg_get_function_arguments", t, i8),
		f("pg_get_function_identity_arguments", t, i8), f("pg_get_function_result", t, i8),
		f("pg_get_serial_sequence", t, t, t), f("obj_description", t, i8), f("obj_description", t, i8, t), f("obj_description", t, t, t),
		f("col_description", t, i8, i4), f("shobj_description", t, i8, t), f("pg_encoding_to_char", t, i4),
		f("getdatabaseencoding", t), f("pg_char_to_encoding", i4, t), f("pg_tablespace_location", t, i8),
		f("pg_relation_size", i8, i8), f("pg_relation_size", i8, i8, t), f("pg_total_relation_size", i8, i8),
		f("pg_table_size", i8, i8), f("pg_indexes_size", i8, i8), f("pg_database_size", i8, i8), f("pg_database_size", i8, t),
		f("pg_size_pretty", t, i8), f("pg_size_pretty", t, types.TDecimal),
		f("to_regclass", i8, t), f("to_regtype", i8, t), f("to_regnamespace", i8, t), f("to_regrole", i8, t),
		f("to_regproc", i8, t), f("pg_relation_is_publishable", b, i8),
		// The reg* input and output functions behind ::regclass and its
		// kin (the planner calls them for casts; see planner/regtype.go).
		f("regclass_in", i8, t), f("regtype_in", i8, t), f("regnamespace_in", i8, t), f("regrole_in", i8, t),
		f("regclass_out", t, i8), f("regtype_out", t, i8), f("regnamespace_out", t, i8),
		f("regrole_out", t, i8), f("regproc_out", t, i8),
	}
	for _, name := range []string{"has_table_privilege", "has_schema_privilege", "has_database_privilege",
		"has_any_column_privilege", "has_function_privilege", "has_sequence_privilege", "has_tablespace_privilege",
		"has_foreign_data_wrapper_privilege", "has_server_privilege", "has_language_privilege", "has_type_privilege"} {
		// (object, privilege) and (user, object, privilege), each object
		// by name or oid.
		out = append(out, f(name, b, t, t), f(name, b, i8, t), f(name, b, t, t, t), f(name, b, t, i8, t),
			f(name, b, i8, t, t), f(name, b, i8, i8, t))
	}
	for _, user := range []types.Type{t, i8} {
		out = append(out, f("has_column_privilege", b, t, t, t), f("has_column_privilege", b, i8, t, t),
			f("has_column_privilege", b, i8, types.TInt16, t), f("has_column_privilege", b, user, t, t, t),
			f("has_column_privilege", b, user, i8, t, t), f("has_column_privilege", b, user, i8, types.TInt16, t))
	}
	for _, name := range []string{"pg_conversion_is_visible", "pg_operator_is_visible", "pg_opclass_is_visible",
		"pg_opfamily_is_visible", "pg_collation_is_visible", "pg_ts_config_is_visible", "pg_ts_dict_is_visible",
		"pg_ts_parser_is_visible", "pg_ts_template_is_visible", "pg_statistics_obj_is_visible"} {
		out = append(out, f(name, b, i8))
	}
	out = append(out, f("pg_has_role", b, t, t), f("pg_has_role", b, i8, t), f("pg_has_role", b, t, t, t),
		f("pg_has_role", b, i8, t, t), f("pg_has_role", b, t, i8, t), f("pg_has_role", b, i8, i8, t))
	return out
}()

// IsSessionFunc reports whether name is a session function: the planner
// refuses it in a streaming job.
func IsSessionFunc(name string) bool {
	for _, f := range sessionFuncs {
		if f.name == name {
			return true
		}
	}
	return false
}

// SessionSignature is one overload of a session function.
type SessionSignature struct {
	Name   string
	Params []types.Type
	Result types.Type
}

// SessionSignatures lists every overload of the session functions.
func SessionSignatures() []SessionSignature {
	out := make([]SessionSignature, len(sessionFuncs))
	for i, f := range sessionFuncs {
		out[i] = SessionSignature{Name: f.name, Params: f.params, Result: f.ret}
	}
	return out
}

// SessionFuncNames lists the session functions' names, each once.
func SessionFuncNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range sessionFuncs {
		if !seen[f.name] {
			seen[f.name] = true
			out = append(out, f.name)
		}
	}
	return out
}

func registerSession(r registry) {
	for _, f := range sessionFuncs {
		r.add(f.name, f.params, f.ret, func(args []Expr, ret types.Type) (Expr, error) {
			return &sessionExpr{name: f.name, args: args, typ: ret, lax: f.lax}, nil
		})
	}
}

// sessionExpr calls a session function once per visible row.
type sessionExpr struct {
	name string
	args []Expr
	typ  types.Type
	lax  bool
}

func (e *sessionExpr) Type() types.Type { return e.typ }

func (e *sessionExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	if ctx == nil || ctx.Session == nil {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "function %s() can be called only in a query", e.name)
	}
	cols := make([]types.Column, len(e.args))
	for i, a := range e.args {
		col, err := a.Eval(ctx, c)
		if err != nil {
			return nil, err
		}
		cols[i] = col
	}
	out, err := types.NewColumn(e.typ, c.Capacity())
	if err != nil {
		return nil, err
	}
	st := evalState{ctx: ctx, chunk: c}
	args := make([]types.Datum, len(cols))
	for row := 0; row < c.Capacity(); row++ {
		v, err := e.call(ctx.Session, cols, args, row, c.Visible(row))
		if err != nil {
			if err = st.rowError(row, err); err != nil {
				return nil, err
			}
			v = nil
		}
		out.Append(v)
	}
	return out, nil
}

// call evaluates one row: NULL for an invisible row, or a NULL argument
// of a strict function.
func (e *sessionExpr) call(s Session, cols []types.Column, args []types.Datum, row int, visible bool) (types.Datum, error) {
	if !visible {
		return nil, nil
	}
	for i, col := range cols {
		args[i] = col.Get(row)
		if args[i] == nil && !e.lax {
			return nil, nil
		}
	}
	v, err := s.Call(e.name, args)
	if err != nil {
		return nil, err
	}
	return v, types.CheckDatum(v, e.typ)
}
