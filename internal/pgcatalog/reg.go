package pgcatalog

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// oidSystemRelBase is the oid of the first system relation: those of
// pg_catalog and information_schema (in relationSpecs' order), then
// sluice_catalog's. They are far above any Sluice relation id.
const oidSystemRelBase = 3_000_000_000

// systemRelations lists the relations of pg_catalog, information_schema
// and sluice_catalog, each with its oid and schema oid.
func systemRelations(src Source) []sysRel {
	out := slices.Clone(postgresRelations())
	for _, r := range src.SluiceCatalog() {
		// Views of the engine's state.
		out = append(out, sysRel{rel: r, nspOID: oidSluice, view: true, oid: oidSystemRelBase + int64(len(out))})
	}
	return out
}

// sluiceRelations are the relations of sluice_catalog, as
// systemRelations lists them.
func sluiceRelations(src Source) []sysRel { return systemRelations(src)[len(postgresRelations()):] }

// postgresRelations are the relations of pg_catalog and
// information_schema, as systemRelations lists them.
var postgresRelations = sync.OnceValue(func() []sysRel {
	var out []sysRel
	for i, s := range relationSpecs {
		out = append(out, sysRel{rel: relations()[s.schema+"."+s.name], nspOID: schemaOID(s.schema),
			view: s.schema == infoSchema || isView(s.name), oid: oidSystemRelBase + int64(i)})
	}
	return out
})

// sysRel is a system relation as pg_class lists it.
type sysRel struct {
	rel    *Relation
	nspOID int64
	view   bool
	oid    int64
}

// isView reports whether pg_catalog.name is a view in Postgres (pg_stat_*,
// pg_roles, pg_settings, …) rather than a table.
func isView(name string) bool {
	switch name {
	case "pg_roles", "pg_user", "pg_shadow", "pg_settings", "pg_tables", "pg_views", "pg_matviews", "pg_indexes",
		"pg_sequences", "pg_locks", "pg_prepared_xacts", "pg_stats", "pg_rules", "pg_group", "pg_policies":
		return true
	}
	return strings.HasPrefix(name, "pg_stat") || strings.HasPrefix(name, "pg_available") || strings.HasPrefix(name, "pg_timezone")
}

func schemaOID(name string) int64 {
	for _, s := range schemas {
		if s.name == name {
			return s.oid
		}
	}
	return 0
}

func schemaName(oid int64) (string, bool) {
	for _, s := range schemas {
		if s.oid == oid {
			return s.name, true
		}
	}
	return "", false
}

// regFunc answers the reg* input and output functions and to_reg*.
func (f Funcs) regFunc(name string, args []types.Datum) (types.Datum, bool, error) {
	switch name {
	case "regclass_in", "to_regclass":
		oid, ok := f.relationOID(text(args[0]))
		return regResult(name, oid, ok, sqlerr.UndefinedTable, "relation %q does not exist", text(args[0]))
	case "regtype_in", "to_regtype":
		t, ok := typeByName(text(args[0]))
		return regResult(name, t.oid, ok, sqlerr.UndefinedObject, "type %q does not exist", text(args[0]))
	case "regnamespace_in", "to_regnamespace":
		oid := schemaOID(unquote(text(args[0])))
		return regResult(name, oid, oid != 0, sqlerr.InvalidSchemaName, "schema %q does not exist", text(args[0]))
	case "regrole_in", "to_regrole":
		oid, ok := f.roleOID(unquote(text(args[0])))
		return regResult(name, oid, ok, sqlerr.UndefinedObject, "role %q does not exist", text(args[0]))
	case "to_regproc": // Sluice has no functions to find
		return regResult(name, 0, false, sqlerr.UndefinedFunction, "function %q does not exist", text(args[0]))
	case "regclass_out":
		return f.relationName(integer(args[0])), true, nil
	case "regtype_out":
		if t, ok := typeByOID(integer(args[0])); ok {
			return t.display, true, nil
		}
	case "regnamespace_out":
		if n, ok := schemaName(integer(args[0])); ok {
			return n, true, nil
		}
	case "regrole_out":
		if n := userName(f.Src, integer(args[0])); n != nil {
			return n, true, nil
		}
	case "regproc_out":
	default:
		return nil, false, nil
	}
	return oidText(args[0]), true, nil
}

// regResult is a reg* input's result: an error for a missing object
// (NULL from to_reg*).
func regResult(fn string, oid int64, ok bool, code sqlerr.Code, format, arg string) (types.Datum, bool, error) {
	switch {
	case ok:
		return oid, true, nil
	case strings.HasPrefix(fn, "to_"):
		return nil, true, nil
	}
	return nil, true, sqlerr.Errorf(code, format, arg)
}

// oidText is an oid with no name, shown as its number; 0 is "-", as
// Postgres shows an invalid oid.
func oidText(d types.Datum) types.Datum {
	if integer(d) == 0 {
		return "-"
	}
	return strconv.FormatInt(integer(d), 10)
}

// relationOID finds a relation by name, optionally schema-qualified, or
// by number.
func (f Funcs) relationOID(name string) (int64, bool) {
	if n, err := strconv.ParseInt(strings.TrimSpace(name), 10, 64); err == nil {
		return n, true
	}
	schema, rel, qualified := strings.Cut(name, ".")
	if !qualified {
		schema, rel = "", name
	}
	schema, rel = unquote(schema), unquote(rel)
	for _, s := range systemRelations(f.Src) {
		if s.rel.Name == rel && (schema == s.rel.Schema || schema == "" && s.rel.Schema == pgCatalog) {
			return s.oid, true
		}
	}
	if schema == "" || schema == "public" {
		if r := relationByName(f.Src, `"`+rel+`"`); r != nil {
			return int64(r.ID), true
		}
		for _, r := range keyTables(f.Src) {
			if r.Name+"_pkey" == rel {
				return indexOID(r), true
			}
		}
	}
	return 0, false
}

// relationName is regclass's output: the name, qualified when it is not
// on the search path.
func (f Funcs) relationName(oid int64) types.Datum {
	if r := relationByID(f.Src, oid); r != nil {
		return r.Name
	}
	if r := indexByOID(f.Src, oid); r != nil {
		return r.Name + "_pkey"
	}
	for _, s := range systemRelations(f.Src) {
		if s.oid == oid {
			if s.rel.Schema == pgCatalog {
				return s.rel.Name
			}
			return s.rel.Schema + "." + s.rel.Name
		}
	}
	return oidText(oid)
}

func (f Funcs) roleOID(name string) (int64, bool) {
	for _, u := range f.Src.Users() {
		if u.Name == name {
			return userOID(f.Src, name), true
		}
	}
	if name == f.Src.User() {
		return userOID(f.Src, name), true
	}
	return 0, false
}
