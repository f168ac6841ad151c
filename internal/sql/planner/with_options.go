package planner

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// checkWithOptions refuses the WITH (…) options of a CREATE MATERIALIZED
// VIEW (a CREATE TABLE's or CREATE SOURCE's are read by the parser and
// checked in source.go, since connector options have dotted names). A
// view takes none yet, and an option it ignored would be a promise broken
// in silence. So each one is an error naming it: a name Postgres does not
// know is 22023, as there; a storage parameter Postgres knows
// (fillfactor, autovacuum_…) is 0A000, as is a connector. The one
// exception is oids = false, which tools still write and which asks for
// nothing, as in Postgres.
func checkWithOptions(st *parser.Statement, what string, opts []*pg_query.Node) error {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		name := d.Defname
		if d.Defnamespace != "" {
			name = d.Defnamespace + "." + name
		}
		switch {
		case name == "oids" && isFalse(optionValue(d)):
			continue
		case name == "oids":
			return errAt(st, sqlerr.FeatureNotSupported, d.Location, "tables declared WITH OIDS are not supported")
		case name == "connector":
			return errAt(st, sqlerr.FeatureNotSupported, d.Location,
				"connector %s is not supported: a %s takes rows through INSERT, UPDATE, DELETE and COPY", optionValue(d), what)
		case isStorageParameter(name):
			return errAt(st, sqlerr.FeatureNotSupported, d.Location, "storage parameter %q is not supported: Sluice keeps no heap to tune", name)
		}
		return errAt(st, sqlerr.InvalidParameterValue, d.Location, "unrecognized parameter %q for a %s", name, what)
	}
	return nil
}

// isStorageParameter: a table or materialized view storage parameter
// Postgres 15 takes (reloptions.c), toast.* included.
func isStorageParameter(name string) bool {
	name = strings.TrimPrefix(name, "toast.")
	switch name {
	case "fillfactor", "toast_tuple_target", "parallel_workers", "autovacuum_enabled", "vacuum_index_cleanup",
		"vacuum_truncate", "user_catalog_table", "log_autovacuum_min_duration":
		return true
	}
	return strings.HasPrefix(name, "autovacuum_")
}

// optionValue is d's value as written, for a message.
func optionValue(d *pg_query.DefElem) string {
	switch v := d.Arg.GetNode().(type) {
	case *pg_query.Node_String_:
		return "'" + v.String_.Sval + "'"
	case *pg_query.Node_TypeName:
		if n := v.TypeName.GetNames(); len(n) > 0 {
			return "'" + n[len(n)-1].GetString_().GetSval() + "'"
		}
	case *pg_query.Node_Integer:
		return strconv.Itoa(int(v.Integer.Ival))
	case *pg_query.Node_Float:
		return v.Float.Fval
	case *pg_query.Node_Boolean:
		return strconv.FormatBool(v.Boolean.Boolval)
	}
	return "(no value)"
}

// isFalse: a boolean option's false value, as Postgres spells it.
func isFalse(v string) bool {
	switch strings.ToLower(strings.Trim(v, "'")) {
	case "false", "off", "no", "0":
		return true
	}
	return false
}
