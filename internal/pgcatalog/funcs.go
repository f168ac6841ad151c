package pgcatalog

import (
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Funcs implements expr.Session over a Source: the session and catalog
// functions of one batch query.
type Funcs struct{ Src Source }

// Call evaluates one session function (expr/session.go lists them with
// their signatures); arguments arrive with the types given there.
func (f Funcs) Call(name string, args []types.Datum) (types.Datum, error) {
	if v, ok, err := f.sessionInfo(name, args); ok {
		return v, err
	}
	if v, ok := f.objectInfo(name, args); ok {
		return v, nil
	}
	if v, ok, err := f.regFunc(name, args); ok {
		return v, err
	}
	if strings.HasSuffix(name, "_is_visible") {
		return false, nil // Sluice has no functions, operators, collations, …
	}
	if strings.HasPrefix(name, "has_") || name == "pg_has_role" {
		return f.hasPrivilege(name, args)
	}
	// expr/session.go lists a function this package does not answer: a
	// bug, which TestSessionFunctionsAnswered catches.
	return nil, sqlerr.Errorf(sqlerr.Internal, "pgcatalog: session function %s has no answer", name)
}

func text(d types.Datum) string {
	s, _ := d.(string)
	return s
}

func integer(d types.Datum) int64 {
	i, _ := d.(int64)
	return i
}

// sessionInfo answers the functions of the session itself.
func (f Funcs) sessionInfo(name string, args []types.Datum) (types.Datum, bool, error) {
	src := f.Src
	switch name {
	case "version":
		return "PostgreSQL " + src.ServerVersion() + " on x86_64-pc-linux-gnu, Sluice streaming database", true, nil
	case "current_database", "current_catalog":
		return src.Database(), true, nil
	case "current_schema":
		return "public", true, nil
	case "current_schemas":
		if args[0] == true {
			return types.DArray{pgCatalog, "public"}, true, nil
		}
		return types.DArray{"public"}, true, nil
	case "current_user", "session_user", "current_role", "user":
		return src.User(), true, nil
	case "pg_backend_pid":
		return int64(src.BackendPID()), true, nil
	case "pg_is_in_recovery":
		return false, true, nil
	case "txid_current":
		return int64(1), true, nil
	case "pg_postmaster_start_time":
		return types.TimestamptzFromTime(src.StartTime()), true, nil
	case "current_setting":
		return f.currentSetting(args)
	case "set_config":
		if args[0] == nil {
			return nil, true, sqlerr.New(sqlerr.NullValueNotAllowed, "SET requires parameter name")
		}
		return args[1], true, src.SetSetting(text(args[0]), text(args[1]))
	case "pg_cancel_backend", "pg_terminate_backend":
		return src.Signal(int32(integer(args[0])), name == "pg_terminate_backend"), true, nil
	}
	return nil, false, nil
}

// currentSetting is current_setting(name[, missing_ok]).
func (f Funcs) currentSetting(args []types.Datum) (types.Datum, bool, error) {
	if args[0] == nil {
		return nil, true, nil
	}
	name := text(args[0])
	if v, ok := f.Src.Setting(name); ok {
		return v, true, nil
	}
	if s, ok := ReadOnlySetting(name); ok {
		return s.Value, true, nil
	}
	if len(args) > 1 && args[1] == true {
		return nil, true, nil
	}
	return nil, true, sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
}

// objectInfo answers the functions that describe catalog rows.
func (f Funcs) objectInfo(name string, args []types.Datum) (types.Datum, bool) {
	src := f.Src
	switch name {
	case "format_type":
		if args[0] == nil {
			return nil, true
		}
		mod := int64(-1)
		if args[1] != nil {
			mod = integer(args[1])
		}
		return formatType(integer(args[0]), mod), true
	case "pg_get_userbyid":
		if n := userName(src, integer(args[0])); n != nil {
			return n, true
		}
		return fmt.Sprintf("unknown (OID=%d)", integer(args[0])), true
	case "pg_table_is_visible":
		if indexByOID(src, integer(args[0])) != nil {
			return true, true
		}
		return f.tableVisible(integer(args[0])), true
	case "pg_type_is_visible":
		_, ok := typeByOID(integer(args[0]))
		return ok, true
	case "pg_relation_is_publishable":
		return false, true
	case "pg_get_expr":
		return args[0], true // adbin holds the expression's text
	case "pg_get_constraintdef":
		return constraintDef(src, integer(args[0])), true
	case "pg_get_viewdef":
		return f.viewDef(args[0]), true
	case "pg_encoding_to_char":
		if integer(args[0]) == encodingUTF8 {
			return "UTF8", true
		}
		return "", true
	case "getdatabaseencoding":
		return "UTF8", true
	case "pg_char_to_encoding":
		if strings.EqualFold(text(args[0]), "UTF8") {
			return int64(encodingUTF8), true
		}
		return int64(-1), true
	case "pg_relation_size", "pg_total_relation_size", "pg_table_size", "pg_indexes_size", "pg_database_size":
		return int64(0), true // Sluice does not account storage per relation
	case "pg_size_pretty":
		return sizePretty(args[0]), true
	case "pg_tablespace_location":
		return "", true
	case "pg_get_indexdef":
		r := indexByOID(src, integer(args[0]))
		if r == nil {
			return nil, true
		}
		col := int64(0)
		if len(args) > 1 {
			col = integer(args[1])
		}
		return indexDef(r, col), true
	case "pg_get_partkeydef", "pg_get_triggerdef", "pg_get_ruledef", "pg_get_statisticsobjdef_columns",
		"pg_get_function_arguments", "pg_get_function_identity_arguments", "pg_get_function_result",
		"pg_get_serial_sequence", "obj_description", "col_description", "shobj_description":
		return nil, true // Sluice has no partitions, triggers, rules, functions' oids, sequences or comments
	}
	return nil, false
}

// viewDef is pg_get_viewdef of a view by oid or name.
func (f Funcs) viewDef(arg types.Datum) types.Datum {
	var id int64
	switch v := arg.(type) {
	case int64:
		id = v
	case string:
		r := relationByName(f.Src, v)
		if r == nil {
			return nil
		}
		id = int64(r.ID)
	}
	if r := relationByID(f.Src, id); r != nil && r.Definition != "" {
		return ViewQuery(r.Definition)
	}
	return nil
}

// sizePretty is pg_size_pretty of a bigint or numeric.
func sizePretty(d types.Datum) types.Datum {
	var n int64
	switch v := d.(type) {
	case int64:
		n = v
	default:
		x, err := types.ParseDatum(types.FormatDatum(d, types.TDecimal), types.TInt64)
		if err != nil {
			return nil
		}
		n = x.(int64)
	}
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB"}
	abs := n
	if abs < 0 {
		abs = -abs
	}
	u := 0
	for abs >= 10*1024 && u < len(units)-1 {
		abs = (abs + 512) / 1024 // Postgres rounds half up at each step
		u++
	}
	if n < 0 {
		abs = -abs
	}
	return fmt.Sprintf("%d %s", abs, units[u])
}

// hasPrivilege answers has_*_privilege and pg_has_role: the object is
// the argument before the privilege, the user the first of three.
func (f Funcs) hasPrivilege(name string, args []types.Datum) (types.Datum, error) {
	user := f.Src.User()
	if len(args) >= 3 {
		if u := f.userArg(args[0]); u != nil {
			user = text(u)
		} else {
			return nil, nil
		}
	}
	if name != "has_table_privilege" && name != "has_any_column_privilege" && name != "has_column_privilege" {
		return true, nil // schemas, databases, functions, types: everyone may use them
	}
	obj := args[0]
	if len(args) >= 3 {
		obj = args[1]
	}
	if len(args) == 4 {
		obj = args[1]
	}
	var r = relationByName(f.Src, text(obj))
	if id, ok := obj.(int64); ok {
		r = relationByID(f.Src, id)
		if r == nil {
			return nil, nil // an unknown oid is NULL, as in Postgres
		}
	}
	if r == nil {
		return nil, sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", text(obj))
	}
	priv := strings.ToUpper(strings.TrimSpace(text(args[len(args)-1])))
	priv, _, _ = strings.Cut(priv, " WITH")
	return f.Src.Allows(user, r, strings.TrimSpace(strings.Split(priv, ",")[0])), nil
}

// userArg is a user given by name or oid.
func (f Funcs) userArg(d types.Datum) types.Datum {
	if oid, ok := d.(int64); ok {
		return userName(f.Src, oid)
	}
	return d
}

// tableVisible is pg_table_is_visible: the relations of public and of
// pg_catalog are on the search path.
func (f Funcs) tableVisible(oid int64) bool {
	if relationByID(f.Src, oid) != nil {
		return true
	}
	for _, s := range systemRelations(f.Src) {
		if s.oid == oid {
			return s.rel.Schema == pgCatalog
		}
	}
	return false
}
