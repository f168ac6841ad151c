package session

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/types"
)

// The functions catalog queries call: session information, the pg_*
// helpers tools use to format catalog rows, privilege checks (root may do
// anything), aggregates and row_number(). Anything else reads as NULL.

var boolFuncs = map[string]bool{
	"pg_table_is_visible": true, "pg_type_is_visible": true, "pg_function_is_visible": true,
	"has_table_privilege": true, "has_schema_privilege": true, "has_database_privilege": true,
	"has_any_column_privilege": true, "has_column_privilege": true, "pg_has_role": true,
	"has_function_privilege": true, "has_sequence_privilege": true, "pg_is_in_recovery": false,
	"bool_and": true, "bool_or": true, "pg_cancel_backend": true, "pg_terminate_backend": true,
}

var intFuncs = map[string]bool{
	"count": true, "row_number": true, "rank": true, "dense_rank": true, "pg_backend_pid": true,
	"array_length": true, "array_upper": true, "array_lower": true, "length": true, "char_length": true,
	"pg_relation_size": true, "pg_total_relation_size": true, "pg_table_size": true, "pg_indexes_size": true,
	"pg_database_size": true, "txid_current": true, "octet_length": true,
}

func funcType(f *pg_query.FuncCall, src []qcol) types.Type {
	name := funcName(f)
	switch {
	case name == "pg_is_in_recovery" || boolFuncs[name]:
		return types.TBool
	case intFuncs[name]:
		return types.TInt64
	case (name == "min" || name == "max" || name == "sum" || name == "nullif" || name == "coalesce") && len(f.Args) > 0:
		return exprType(f.Args[0], src)
	}
	return types.TVarchar
}

func (e *env) funcCall(f *pg_query.FuncCall) any {
	name := funcName(f)
	if f.Over != nil {
		return e.window(f, name)
	}
	if aggregates[name] && e.grouped {
		return e.aggregate(f, name)
	}
	if sessionFuncs[name] {
		return e.sessionFunc(f, name)
	}
	args := e.list(f.Args)
	arg := func(i int) any {
		if i < len(args) {
			return args[i]
		}
		return nil
	}
	switch name {
	case "pg_cancel_backend", "pg_terminate_backend":
		if arg(0) == nil {
			return nil
		}
		return e.c.s.signalBackend(name, uint32(asInt(arg(0))))
	case "format_type":
		mod := int64(-1)
		if m := arg(1); m != nil {
			mod = asInt(m)
		}
		return formatType(asInt(arg(0)), mod)
	case "pg_get_expr":
		return arg(0)
	case "set_config":
		// Unknown settings (bytea_output, …) are accepted and ignored.
		_ = e.c.s.vars.set(toText(arg(0)).(string), toText(arg(1)).(string))
		return arg(1)
	case "pg_get_userbyid":
		return e.c.s.user
	case "pg_get_viewdef":
		if r, ok := e.c.s.e.Catalog().ByID(uint32(asInt(arg(0)))); ok {
			return viewQuery(r.Definition)
		}
		return nil
	case "pg_get_constraintdef":
		return e.c.s.constraintDef(asInt(arg(0)))
	case "pg_encoding_to_char", "getdatabaseencoding":
		return "UTF8"
	case "lower":
		return strings.ToLower(toText(arg(0)).(string))
	case "upper":
		return strings.ToUpper(toText(arg(0)).(string))
	case "length", "char_length", "octet_length":
		if arg(0) == nil {
			return nil
		}
		return int64(len(toText(arg(0)).(string)))
	case "concat":
		var b strings.Builder
		for _, a := range args {
			b.WriteString(toText(a).(string))
		}
		return b.String()
	case "array_to_string":
		if arg(0) == nil {
			return nil
		}
		parts := []string{}
		for _, v := range toList(arg(0)) {
			if v != nil {
				parts = append(parts, toText(v).(string))
			}
		}
		return strings.Join(parts, toText(arg(1)).(string))
	case "quote_ident", "btrim", "trim":
		return arg(0)
	case "nullif":
		if k, ok := compare(arg(0), arg(1)); ok && k == 0 {
			return nil
		}
		return arg(0)
	case "coalesce":
		for _, a := range args {
			if a != nil {
				return a
			}
		}
		return nil
	case "array_length", "array_upper":
		if arg(0) == nil {
			return nil
		}
		return int64(len(toList(arg(0))))
	case "array_lower":
		if len(toList(arg(0))) == 0 {
			return nil
		}
		return int64(1)
	case "pg_relation_size", "pg_total_relation_size", "pg_table_size", "pg_indexes_size", "pg_database_size":
		return int64(0)
	case "pg_size_pretty":
		return "0 bytes"
	case "txid_current":
		return int64(1)
	}
	if boolFuncs[name] {
		return true
	}
	return nil
}

// viewQuery is the SELECT of a CREATE MATERIALIZED VIEW … AS statement,
// which is what pg_get_viewdef returns.
func viewQuery(def string) string {
	if i := strings.Index(strings.ToUpper(def), " AS "); i >= 0 && strings.HasPrefix(strings.ToUpper(def), "CREATE") {
		return strings.TrimSpace(def[i+4:])
	}
	return def
}

func asInt(v any) int64 {
	i, _ := toInt(v).(int64)
	return i
}

func (e *env) sessionFunc(f *pg_query.FuncCall, name string) any {
	if name == "current_schemas" {
		if len(f.Args) > 0 && truthy(e.eval(f.Args[0])) {
			return []any{"pg_catalog", "public"}
		}
		return []any{"public"}
	}
	if name == "pg_backend_pid" {
		return int64(e.c.s.pid)
	}
	if name == "pg_is_in_recovery" {
		return false
	}
	_, v := e.c.s.sessionValue(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: f}})
	return v
}

// aggregate evaluates an aggregate over the current group.
func (e *env) aggregate(f *pg_query.FuncCall, name string) any {
	var vals []any
	for _, r := range e.group {
		if f.AggStar {
			vals = append(vals, true)
			continue
		}
		if len(f.Args) == 0 {
			continue
		}
		if v := e.with(r).eval(f.Args[0]); v != nil {
			vals = append(vals, v)
		}
	}
	if f.AggDistinct {
		vals = uniq(vals)
	}
	switch name {
	case "count":
		return int64(len(vals))
	case "array_agg":
		return vals
	case "string_agg":
		sep := ""
		if len(f.Args) > 1 {
			sep = toText(e.eval(f.Args[1])).(string)
		}
		if len(vals) == 0 {
			return nil
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = toText(v).(string)
		}
		return strings.Join(parts, sep)
	}
	if len(vals) == 0 {
		return nil
	}
	acc := vals[0]
	for _, v := range vals[1:] {
		acc = fold(name, acc, v)
	}
	return acc
}

func fold(name string, acc, v any) any {
	switch name {
	case "min", "max":
		k, _ := compare(v, acc)
		if (name == "min" && k < 0) || (name == "max" && k > 0) {
			return v
		}
		return acc
	case "sum", "avg":
		return asInt(acc) + asInt(v)
	case "bool_and":
		return truthy(acc) && truthy(v)
	case "bool_or":
		return truthy(acc) || truthy(v)
	}
	return acc
}

func uniq(vals []any) []any {
	var out []any
	for _, v := range vals {
		dup := false
		for _, o := range out {
			if k, ok := compare(v, o); ok && k == 0 {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

// window evaluates row_number() / rank() / count(*) OVER (PARTITION BY …
// ORDER BY …) against all rows of the query.
func (e *env) window(f *pg_query.FuncCall, name string) any {
	if e.all == nil {
		return nil
	}
	w := f.Over
	key := func(r []any, list []*pg_query.Node) []any {
		var k []any
		for _, n := range list {
			if sb := n.GetSortBy(); sb != nil {
				n = sb.Node
			}
			k = append(k, e.with(r).eval(n))
		}
		return k
	}
	part := key(e.row, w.PartitionClause)
	order := key(e.row, w.OrderClause)
	n, before := int64(0), int64(0)
	for j, r := range e.all {
		if !sameKey(key(r, w.PartitionClause), part) {
			continue
		}
		n++
		k := cmpKeys(key(r, w.OrderClause), order, w.OrderClause)
		if k < 0 || (k == 0 && j < e.idx && name == "row_number") {
			before++
		}
	}
	if name == "count" {
		return n
	}
	return before + 1
}

func sameKey(a, b []any) bool {
	for i := range a {
		if a[i] == nil && b[i] == nil {
			continue
		}
		if k, ok := compare(a[i], b[i]); !ok || k != 0 {
			return false
		}
	}
	return true
}

func cmpKeys(a, b []any, sorts []*pg_query.Node) int {
	for i := range a {
		sb := sorts[i].GetSortBy()
		if d := orderCmp(a[i], b[i], sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC, sb.SortbyNulls); d != 0 {
			return d
		}
	}
	return 0
}
