package session

import (
	"context"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/types"
)

// Sluice has no real system catalogs. Queries that read pg_catalog or
// information_schema, or call the session-information functions, are
// recognised here and answered from the catalog: catalogeval.go evaluates
// them over virtual system tables (pgcatalog.go notes what psql's \d
// family sends). A query the evaluator cannot run (it mixes in user
// tables, say) gets an empty result with the columns its target list
// names, which is what drivers probing optional features cope with best.

// sessionFuncs are functions answered from the session.
var sessionFuncs = map[string]bool{
	"version": true, "current_database": true, "current_schema": true, "current_user": true,
	"session_user": true, "current_catalog": true, "pg_backend_pid": true, "current_setting": true,
	"pg_is_in_recovery": true, "current_schemas": true,
}

// isCatalogQuery reports whether sel is answered here instead of planned.
func (s *Session) isCatalogQuery(sel *pg_query.SelectStmt) bool {
	if sel.Op != pg_query.SetOperation_SETOP_NONE {
		return s.isCatalogQuery(sel.Larg) || s.isCatalogQuery(sel.Rarg)
	}
	if len(sel.FromClause) == 0 {
		return len(sel.TargetList) > 0 && (allSessionTargets(sel.TargetList) || callsCatalogFunc(sel.TargetList))
	}
	return readsSystemCatalog(sel)
}

// allSessionTargets reports whether a FROM-less select list is session
// information (version(), current_user, …) the session answers itself:
// every item such a call or a constant, and at least one a call. Constants
// alone (SELECT 1, SELECT true) are planned, so they keep their types.
func allSessionTargets(list []*pg_query.Node) bool {
	call := false
	for _, n := range list {
		v := n.GetResTarget().GetVal()
		if tc := v.GetTypeCast(); tc != nil {
			if tc.Arg.GetAConst() != nil && plannerType(tc.TypeName) {
				return false // a typed literal ('{1,2}'::int[]) is parsed by the planner
			}
			v = tc.Arg
		}
		switch {
		case v.GetFuncCall() != nil && sessionFuncs[funcName(v.GetFuncCall())]:
			call = true
		case v.GetSqlvalueFunction() != nil:
			call = true
		case v.GetAConst() != nil:
		default:
			return false
		}
	}
	return call
}

// plannerType reports whether the planner knows the type tn names.
func plannerType(tn *pg_query.TypeName) bool {
	_, ok := types.ParseTypeName(strings.ToLower(typeNameOf(tn)))
	return ok
}

// callsCatalogFunc reports whether a FROM-less target list calls one of
// the catalog helpers catalogfuncs.go knows (pg_*, has_*_privilege,
// set_config, txid_current, …): such a query is evaluated, not planned.
// A call the evaluator does not know (pg_sleep, say) sends the query to
// the planner, which reports it (42883) instead of reading it as NULL.
func callsCatalogFunc(list []*pg_query.Node) bool {
	found, unknown := false, false
	for _, n := range list {
		walkFuncs(n, func(f *pg_query.FuncCall) {
			name := funcName(f)
			if !knownCatalogFunc(name) {
				unknown = true
				return
			}
			found = found || strings.HasPrefix(name, "pg_") || strings.HasPrefix(name, "has_") ||
				sessionFuncs[name] || name == "set_config" || name == "txid_current" || name == "format_type"
		})
	}
	return found && !unknown
}

// catalogScalarFuncs are the functions catalogfuncs.go evaluates beyond
// the typed sets (boolFuncs, intFuncs, sessionFuncs).
var catalogScalarFuncs = map[string]bool{
	"format_type": true, "set_config": true, "pg_get_userbyid": true, "pg_get_viewdef": true,
	"pg_get_expr": true, "pg_get_constraintdef": true, "pg_encoding_to_char": true, "getdatabaseencoding": true,
	"pg_size_pretty": true, "quote_ident": true, "array_to_string": true, "array_agg": true, "string_agg": true,
	"lower": true, "upper": true, "btrim": true, "trim": true, "coalesce": true, "nullif": true,
	"min": true, "max": true, "sum": true, "avg": true,
}

func knownCatalogFunc(name string) bool {
	return boolFuncs[name] || intFuncs[name] || sessionFuncs[name] || catalogScalarFuncs[name]
}

func funcName(f *pg_query.FuncCall) string {
	if len(f.Funcname) == 0 {
		return ""
	}
	return strings.ToLower(f.Funcname[len(f.Funcname)-1].GetString_().GetSval())
}

// readsSystemCatalog looks for pg_catalog / information_schema relations
// anywhere in the statement's text form (joins, subqueries, CTEs).
func readsSystemCatalog(sel *pg_query.SelectStmt) bool {
	found := false
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		if n == nil || found {
			return
		}
		switch x := n.Node.(type) {
		case *pg_query.Node_RangeVar:
			rv := x.RangeVar
			found = rv.Schemaname == "pg_catalog" || rv.Schemaname == "information_schema" ||
				strings.HasPrefix(rv.Relname, "pg_")
		case *pg_query.Node_JoinExpr:
			walk(x.JoinExpr.Larg)
			walk(x.JoinExpr.Rarg)
		case *pg_query.Node_RangeFunction:
			// pg_get_keywords(), pg_show_all_settings(), …
			for _, f := range x.RangeFunction.Functions {
				for _, it := range f.GetList().GetItems() {
					if fc := it.GetFuncCall(); fc != nil && strings.HasPrefix(funcName(fc), "pg_") {
						found = true
					}
				}
			}
		case *pg_query.Node_RangeSubselect:
			walk(x.RangeSubselect.Subquery)
		case *pg_query.Node_SelectStmt:
			for _, f := range x.SelectStmt.FromClause {
				walk(f)
			}
		}
	}
	for _, f := range sel.FromClause {
		walk(f)
	}
	if sel.WithClause != nil {
		for _, cte := range sel.WithClause.Ctes {
			q := cte.GetCommonTableExpr().GetCtequery().GetSelectStmt()
			found = found || (q != nil && readsSystemCatalog(q))
		}
	}
	return found
}

// maybeCatalogQuery answers a catalog query; ok is false for an ordinary
// SELECT.
func (s *Session) maybeCatalogQuery(ctx context.Context, st *parser.Statement, sel *pg_query.SelectStmt, w pgwire.ResultWriter) (bool, error) {
	if !s.isCatalogQuery(sel) {
		return false, nil
	}
	if sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.FromClause) == 0 && allSessionTargets(sel.TargetList) {
		return true, s.sessionInfo(ctx, sel.TargetList, w)
	}
	if cols, rows, err := s.evalCatalog(sel); err == nil {
		return true, writeRows(ctx, w, cols, rows)
	}
	return true, writeRows(ctx, w, targetColumns(sel), nil)
}

// sessionInfo evaluates SELECT version(), current_database(), … .
func (s *Session) sessionInfo(ctx context.Context, list []*pg_query.Node, w pgwire.ResultWriter) error {
	cols := make([]pgwire.Column, len(list))
	row := make(types.Row, len(list))
	for i, n := range list {
		rt := n.GetResTarget()
		v := rt.GetVal()
		if tc := v.GetTypeCast(); tc != nil {
			v = tc.Arg
		}
		name, val := s.sessionValue(v)
		if rt.Name != "" {
			name = rt.Name
		}
		cols[i] = pgwire.Column{Name: name, Type: types.TVarchar}
		row[i] = val
	}
	return writeRows(ctx, w, cols, []types.Row{row})
}

func (s *Session) sessionValue(v *pg_query.Node) (string, types.Datum) {
	if c := v.GetAConst(); c != nil {
		if c.Isnull {
			return "?column?", nil
		}
		return "?column?", constText(c)
	}
	if sv := v.GetSqlvalueFunction(); sv != nil {
		switch sv.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
			return "current_schema", "public"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
			return "current_catalog", s.db
		}
		return strings.ToLower(strings.TrimPrefix(sv.Op.String(), "SVFOP_")), s.user
	}
	f := v.GetFuncCall()
	name := funcName(f)
	switch name {
	case "version":
		return name, "PostgreSQL " + s.h.cfg.ServerVersion + " on x86_64-pc-linux-gnu, Sluice streaming database"
	case "current_database", "current_catalog":
		return name, s.db
	case "current_schema":
		return name, "public"
	case "current_schemas":
		return name, "{public}"
	case "current_user", "session_user":
		return name, s.user
	case "pg_backend_pid":
		return name, itoa(int(s.pid))
	case "pg_is_in_recovery":
		return name, "f"
	case "current_setting":
		if len(f.Args) >= 1 && f.Args[0].GetAConst() != nil {
			key := constText(f.Args[0].GetAConst())
			if _, val, err := s.vars.get(key); err == nil {
				return name, val
			}
			if v, ok := readOnlySetting(key); ok {
				return name, v[1]
			}
		}
	}
	return name, nil
}

// targetColumns names the columns of a target list as Postgres would.
func targetColumns(sel *pg_query.SelectStmt) []pgwire.Column {
	for sel.Op != pg_query.SetOperation_SETOP_NONE {
		sel = sel.Larg
	}
	var names []string
	for _, n := range sel.TargetList {
		rt := n.GetResTarget()
		names = append(names, targetName(rt))
	}
	return textColumns(names...)
}

func targetName(rt *pg_query.ResTarget) string {
	if rt.Name != "" {
		return rt.Name
	}
	v := rt.Val
	if tc := v.GetTypeCast(); tc != nil {
		v = tc.Arg
	}
	switch {
	case v.GetColumnRef() != nil:
		f := v.GetColumnRef().Fields
		if s := f[len(f)-1].GetString_(); s != nil {
			return s.Sval
		}
	case v.GetFuncCall() != nil:
		return funcName(v.GetFuncCall())
	}
	return "?column?"
}
