package pgcatalog

import (
	"strings"
	"sync"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// The schemas this package serves.
const (
	pgCatalog  = "pg_catalog"
	infoSchema = "information_schema"
)

// PgCatalog and InformationSchema name the schemas.
const (
	PgCatalog         = pgCatalog
	InformationSchema = infoSchema
)

// relationSpec is one generated relation (relations_gen.go).
type relationSpec struct{ schema, name, cols string }

// Relation is one relation of pg_catalog or information_schema.
type Relation struct {
	Schema, Name string
	Columns      []catalog.Column
	// index finds a column by name.
	index map[string]int
}

// functionRelations are the set-returning functions a FROM clause may
// call, as relations of pg_catalog named after the function.
var functionRelations = []relationSpec{
	{pgCatalog, "pg_get_keywords", "word catcode barelabel:b catdesc baredesc"},
	{pgCatalog, "pg_show_all_settings", "name setting unit category short_desc extra_desc context vartype source " +
		"min_val max_val enumvals:t[] boot_val reset_val sourcefile sourceline:i pending_restart:b"},
}

var relations = sync.OnceValue(func() map[string]*Relation {
	out := map[string]*Relation{}
	for _, specs := range [][]relationSpec{relationSpecs, functionRelations} {
		for _, s := range specs {
			r := &Relation{Schema: s.schema, Name: s.name, index: map[string]int{}}
			for _, f := range strings.Fields(s.cols) {
				name, code, _ := strings.Cut(f, ":")
				r.index[name] = len(r.Columns)
				r.Columns = append(r.Columns, catalog.Column{Name: name, Type: specType(code)})
			}
			out[s.schema+"."+s.name] = r
		}
	}
	return out
})

// specType is the type of a column's code in relationSpecs.
func specType(code string) types.Type {
	if elem, ok := strings.CutSuffix(code, "[]"); ok {
		return types.ArrayOf(specType(elem))
	}
	switch code {
	case "o", "l":
		return types.TInt64
	case "s":
		return types.TInt16
	case "i":
		return types.TInt32
	case "f":
		return types.TFloat32
	case "d":
		return types.TFloat64
	case "n":
		return types.TDecimal
	case "b":
		return types.TBool
	case "y":
		return types.TBytea
	case "z":
		return types.TTimestamptz
	case "v":
		return types.TInterval
	}
	return types.TVarchar
}

// IsSchema reports whether schema is served here.
func IsSchema(schema string) bool { return schema == pgCatalog || schema == infoSchema }

// Lookup finds schema.name; an empty schema searches pg_catalog, which
// precedes every other schema in Postgres's search path.
func Lookup(schema, name string) (*Relation, bool) {
	if schema == "" {
		schema = pgCatalog
	}
	if _, fn := FunctionRelation(name); fn && schema == pgCatalog {
		return nil, false // a function, not a relation
	}
	r, ok := relations()[schema+"."+name]
	return r, ok
}

// FunctionRelation finds the set-returning function name (pg_get_keywords,
// pg_show_all_settings), called in FROM with no arguments.
func FunctionRelation(name string) (*Relation, bool) {
	for _, s := range functionRelations {
		if s.name == name {
			return relations()[s.schema+"."+s.name], true
		}
	}
	return nil, false
}

// Relations lists the relations of schema (not the functions), by name.
func Relations(schema string) []*Relation {
	var out []*Relation
	for _, s := range relationSpecs {
		if s.schema == schema {
			out = append(out, relations()[s.schema+"."+s.name])
		}
	}
	return out
}

// NewRelation describes a relation of another schema (sluice_catalog)
// for pg_class and pg_attribute.
func NewRelation(schema, name string, cols []catalog.Column) *Relation {
	r := &Relation{Schema: schema, Name: name, Columns: cols, index: map[string]int{}}
	for i, c := range cols {
		r.index[c.Name] = i
	}
	return r
}

// vals are a row's values by column name; a column not named is NULL.
type vals map[string]types.Datum

// row lays v out in r's column order. A producer serving several
// relations (pg_roles, pg_user, pg_authid) names the columns of all of
// them; each keeps its own.
func (r *Relation) row(v vals) types.Row {
	out := make(types.Row, len(r.Columns))
	for name, d := range v {
		if i, ok := r.index[name]; ok {
			out[i] = d
		}
	}
	return out
}
