package planner

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// checkWithOptions refuses the WITH (…) options of a CREATE TABLE or
// CREATE MATERIALIZED VIEW. Sluice takes none yet, and an option it
// ignored would be a promise broken in silence: a table declared
// WITH (connector = 'kafka', topic = …) that reads nothing, or a misspelt
// option that does not do what its writer thinks. So each one is an error
// naming it, as Postgres names an unrecognized parameter (22023); a
// connector is named as such, since connectors are what WITH will carry.
func checkWithOptions(st *parser.Statement, what string, opts []*pg_query.Node) error {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		if d.Defname == "connector" {
			return errAt(st, sqlerr.FeatureNotSupported, d.Location,
				"connector %s is not supported: a %s takes rows through INSERT, UPDATE, DELETE and COPY", optionValue(d), what)
		}
		name := d.Defname
		if d.Defnamespace != "" {
			name = d.Defnamespace + "." + name
		}
		return errAt(st, sqlerr.InvalidParameterValue, d.Location, "unrecognized parameter %q for a %s", name, what)
	}
	return nil
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
