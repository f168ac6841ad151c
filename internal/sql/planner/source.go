package planner

import (
	"strings"

	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// CreateSource is CREATE SOURCE.
type CreateSource struct {
	Spec        engine.SourceSpec
	IfNotExists bool
}

func (*CreateSource) isResult() {}

// tableConnector reads the WITH options of a CREATE TABLE or CREATE
// SOURCE (parser.Statement.With). With a connector it returns the
// connector's name and other options (the columns are filled later);
// without one, a plain table's options are checked as Postgres would and
// nil is returned.
func tableConnector(st *parser.Statement) (*connector.Spec, error) {
	var spec *connector.Spec
	opts := map[string]string{}
	for _, o := range st.With {
		// Option names are case-insensitive, quoted or not.
		name := strings.ToLower(o.Name)
		if _, dup := opts[name]; dup || (name == "connector" && spec != nil) {
			return nil, optionErr(st, o, sqlerr.Code("42710"), "option %q specified more than once", o.Name)
		}
		if name == "connector" {
			spec = &connector.Spec{Connector: strings.ToLower(o.Value)}
			continue
		}
		opts[name] = o.Value
	}
	if spec == nil {
		return nil, checkPlainOptions(st)
	}
	if len(opts) > 0 {
		spec.Options = opts
	}
	if st.Format != "" && (st.Format != "PLAIN" || (st.Encode != "JSON" && st.Encode != "NATIVE") || len(st.EncodeOptions) > 0) {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported,
			"FORMAT %s ENCODE %s is not supported for connector %s; its rows are typed already (FORMAT PLAIN ENCODE JSON or none)",
			st.Format, st.Encode, spec.Connector)
	}
	return spec, nil
}

// checkPlainOptions checks a CREATE TABLE's WITH options when it names no
// connector: see checkWithOptions.
func checkPlainOptions(st *parser.Statement) error {
	what := "table"
	if st.Source {
		if !st.HasWith {
			return sqlerr.Errorf(sqlerr.InvalidParameterValue, "a source needs WITH (connector = …); the connectors are %s",
				strings.Join(connector.Names(), ", "))
		}
		what = "source"
	}
	for _, o := range st.With {
		switch {
		case o.Name == "oids" && isFalse(o.Value):
			continue
		case o.Name == "oids":
			return optionErr(st, o, sqlerr.FeatureNotSupported, "tables declared WITH OIDS are not supported")
		case isStorageParameter(o.Name):
			return optionErr(st, o, sqlerr.FeatureNotSupported, "storage parameter %q is not supported: Sluice keeps no heap to tune", o.Name)
		}
		return optionErr(st, o, sqlerr.InvalidParameterValue, "unrecognized parameter %q for a %s", o.Name, what)
	}
	if st.Source {
		return sqlerr.New(sqlerr.InvalidParameterValue, "a source needs the option connector")
	}
	if st.Format != "" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "FORMAT … ENCODE … needs WITH (connector = …)")
	}
	return nil
}

func optionErr(st *parser.Statement, o parser.Option, code sqlerr.Code, format string, args ...any) error {
	e := sqlerr.Errorf(code, format, args...)
	e.Position = parser.Position(st.Input, o.Offset)
	return e
}

// withConnector finishes a CREATE SOURCE, or a CREATE TABLE … WITH
// (connector = …), once the columns and key are read.
func withConnector(st *parser.Statement, spec engine.TableSpec, conn *connector.Spec, ifNotExists bool) (Result, error) {
	for _, c := range spec.Columns {
		conn.Columns = append(conn.Columns, connector.Column{Name: c.Name, Type: c.Type})
	}
	if st.Source {
		if err := checkSourceColumns(spec); err != nil {
			return nil, err
		}
	}
	conn.RowID = len(spec.PK) == 0
	if _, err := connector.Open(*conn); err != nil {
		return nil, err
	}
	if st.Source {
		return &CreateSource{IfNotExists: ifNotExists, Spec: engine.SourceSpec{Name: spec.Name, Columns: spec.Columns,
			Connector: *conn, Watermark: spec.Watermark, Definition: spec.Definition}}, nil
	}
	spec.Connector = conn
	return &CreateTable{Spec: spec, IfNotExists: ifNotExists}, nil
}

// checkSourceColumns refuses what a source cannot keep: a key (it stores
// no rows to key), defaults and NOT NULL (it takes no DML).
func checkSourceColumns(spec engine.TableSpec) error {
	if len(spec.PK) > 0 {
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"a source has no primary key: it stores no rows; use CREATE TABLE … WITH (connector = …) for a keyed table fed by a connector")
	}
	if spec.AppendOnly {
		return sqlerr.New(sqlerr.FeatureNotSupported, "APPEND ONLY is for tables; a source is append-only already")
	}
	for _, c := range spec.Columns {
		if c.Default != "" || c.NotNull {
			return sqlerr.Errorf(sqlerr.FeatureNotSupported,
				"column %q of a source cannot have DEFAULT or NOT NULL: a source takes no INSERT", c.Name)
		}
	}
	return nil
}

// notQueryable refuses a batch plan reading a source: the generators make
// rows only for streaming jobs, and a log connector's rows are not kept.
func notQueryable(n *plan.Node) error {
	if n == nil {
		return nil
	}
	if n.Kind == plan.KindConnectorSource && n.Connector != nil {
		e := sqlerr.Errorf(sqlerr.FeatureNotSupported, "source %q cannot be queried directly: connector %s makes rows only "+
			"for the streaming jobs that read it", n.Connector.Name, n.Connector.Spec.Connector)
		e.Hint = "Create a materialized view over it, or a table WITH (connector = …) to keep its rows."
		return e
	}
	for _, in := range n.Inputs {
		if err := notQueryable(in); err != nil {
			return err
		}
	}
	return nil
}
