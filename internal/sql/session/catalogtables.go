package session

import (
	"github.com/sluice-db/sluice/internal/connector"
	"slices"
	"strings"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/types"
)

// The virtual system tables catalogeval.go evaluates GUI tools' and
// drivers' catalog queries over. They are built per query from the
// engine's catalog, hold only the columns clients commonly read, and use
// the Go values the evaluator works with: int64, bool, string or nil.
// A column a query names that a table lacks reads as NULL.

// vtable is one virtual relation.
type vtable struct {
	cols  []vcol
	rows  [][]any
	known bool // false: an unknown catalog relation, read as empty
}

type vcol struct {
	name string
	typ  types.Type
}

// Namespace OIDs as Postgres assigns them (information_schema's varies
// by installation; any stable value does).
const (
	oidPgCatalog  = 11
	oidPublic     = 2200
	oidInfoSchema = 13000
	oidDatabase   = 16384
	oidRoot       = 10
	oidFirstUser  = 16000 // the catalog's users, in name order
)

// pgTypeInfo describes one row of pg_type.
type pgTypeInfo struct {
	oid      int64
	name     string // typname
	display  string // format_type
	length   int64
	category string
	elem     int64 // element type of an array type
	array    int64 // array type of a base type
}

// pgTypes lists the types Sluice speaks with their array types.
var pgTypes = []pgTypeInfo{
	{16, "bool", "boolean", 1, "B", 0, 1000},
	{17, "bytea", "bytea", -1, "U", 0, 1001},
	{18, "char", `"char"`, 1, "S", 0, 1002},
	{19, "name", "name", 64, "S", 0, 1003},
	{20, "int8", "bigint", 8, "N", 0, 1016},
	{21, "int2", "smallint", 2, "N", 0, 1005},
	{23, "int4", "integer", 4, "N", 0, 1007},
	{25, "text", "text", -1, "S", 0, 1009},
	{26, "oid", "oid", 4, "N", 0, 1028},
	{700, "float4", "real", 4, "N", 0, 1021},
	{701, "float8", "double precision", 8, "N", 0, 1022},
	{1042, "bpchar", "character", -1, "S", 0, 1014},
	{1043, "varchar", "character varying", -1, "S", 0, 1015},
	{1082, "date", "date", 4, "D", 0, 1182},
	{1083, "time", "time without time zone", 8, "D", 0, 1183},
	{1114, "timestamp", "timestamp without time zone", 8, "D", 0, 1115},
	{1184, "timestamptz", "timestamp with time zone", 8, "D", 0, 1185},
	{1186, "interval", "interval", 16, "T", 0, 1187},
	{1700, "numeric", "numeric", -1, "N", 0, 1231},
}

// typeByOID finds a pg_type row, arrays included.
func typeByOID(oid int64) (pgTypeInfo, bool) {
	for _, t := range pgTypes {
		if t.oid == oid {
			return t, true
		}
		if t.array == oid {
			return pgTypeInfo{oid: oid, name: "_" + t.name, display: t.display + "[]", length: -1, category: "A", elem: t.oid}, true
		}
	}
	return pgTypeInfo{}, false
}

func typeByName(name string) (pgTypeInfo, bool) {
	name = strings.TrimPrefix(strings.ToLower(name), "pg_catalog.")
	for _, t := range pgTypes {
		if t.name == name || t.display == name {
			return t, true
		}
		if t.name == strings.TrimPrefix(name, "_") || t.display+"[]" == name {
			return typeByOID(t.array)
		}
	}
	return pgTypeInfo{}, false
}

// readOnlySettings are fixed limits drivers read from pg_settings or
// current_setting (JDBC's getMaxIndexKeys, version checks): name, value,
// description.
var readOnlySettings = [][3]string{
	{"max_index_keys", "32", "Maximum number of index keys."},
	{"block_size", "8192", "Size of a disk block."},
	{"server_version_num", "150000", "Server version as an integer."},
	{"max_function_args", "100", "Maximum number of function arguments."},
	{"lc_collate", "C.UTF-8", "Collation order locale."},
	{"lc_ctype", "C.UTF-8", "Character classification locale."},
}

func readOnlySetting(name string) ([3]string, bool) {
	i := slices.IndexFunc(readOnlySettings, func(v [3]string) bool { return v[0] == strings.ToLower(name) })
	if i < 0 {
		return [3]string{}, false
	}
	return readOnlySettings[i], true
}

func cols(spec string) []vcol {
	var out []vcol
	for _, f := range strings.Fields(spec) {
		name, typ, _ := strings.Cut(f, ":")
		t := types.TVarchar
		switch typ {
		case "i":
			t = types.TInt64
		case "b":
			t = types.TBool
		}
		out = append(out, vcol{name: name, typ: t})
	}
	return out
}

// systemTable returns the virtual table schema.name ("" schema: found by
// name in pg_catalog, then information_schema).
func (s *Session) systemTable(schema, name string) vtable {
	name = strings.ToLower(name)
	if schema == "information_schema" || (schema == "" && !strings.HasPrefix(name, "pg_")) {
		if t, ok := s.infoSchemaTable(name); ok {
			return t
		}
		return vtable{}
	}
	if t, ok := s.pgCatalogTable(name); ok {
		return t
	}
	return vtable{}
}

func (s *Session) pgCatalogTable(name string) (vtable, bool) {
	switch name {
	case "pg_namespace":
		t := vtable{cols: cols("oid:i nspname nspowner:i nspacl"), known: true}
		t.rows = [][]any{{int64(oidPgCatalog), "pg_catalog", int64(oidRoot), nil},
			{int64(oidPublic), "public", int64(oidRoot), nil},
			{int64(oidInfoSchema), "information_schema", int64(oidRoot), nil}}
		return t, true
	case "pg_class", "pg_tables", "pg_matviews", "pg_views":
		return s.pgClass(name), true
	case "pg_attribute":
		return s.pgAttribute(), true
	case "pg_type":
		return pgType(), true
	case "pg_database":
		t := vtable{cols: cols("oid:i datname datdba:i encoding:i datcollate datctype datistemplate:b datallowconn:b datconnlimit:i dattablespace:i datacl"), known: true}
		t.rows = [][]any{{int64(oidDatabase), s.db, int64(oidRoot), int64(6), "C.UTF-8", "C.UTF-8", false, true, int64(-1), int64(1663), nil}}
		return t, true
	case "pg_settings":
		t := vtable{cols: cols("name setting unit category short_desc extra_desc context vartype source min_val max_val enumvals boot_val reset_val pending_restart:b"), known: true}
		all := s.vars.all()
		for _, v := range readOnlySettings {
			if !slices.ContainsFunc(all, func(a [3]string) bool { return a[0] == v[0] }) {
				all = append(all, v)
			}
		}
		for _, v := range all {
			t.rows = append(t.rows, []any{v[0], v[1], nil, "Sluice", v[2], nil, "user", "string", "default", nil, nil, nil, v[1], v[1], false})
		}
		return t, true
	case "pg_roles", "pg_user", "pg_authid", "pg_shadow":
		t := vtable{cols: cols("oid:i rolname usename usesysid:i rolsuper:b usesuper:b rolinherit:b rolcreaterole:b rolcreatedb:b usecreatedb:b rolcanlogin:b rolreplication:b rolconnlimit:i rolvaliduntil rolbypassrls:b rolconfig"), known: true}
		for i, u := range s.e.Catalog().Users() {
			oid := int64(oidRoot)
			if i > 0 {
				oid = int64(oidFirstUser + i)
			}
			su := u.Superuser
			t.rows = append(t.rows, []any{oid, u.Name, u.Name, oid, su, su, true, su, su, su, true, false, int64(-1), nil, su, nil})
		}
		if _, known := s.e.Catalog().User(s.user); !known { // a trusted client's own name
			t.rows = append(t.rows, []any{int64(oidRoot + 1), s.user, s.user, int64(oidRoot + 1), true, true, true, true, true, true, true, false, int64(-1), nil, true, nil})
		}
		return t, true
	case "pg_am":
		t := vtable{cols: cols("oid:i amname amtype"), known: true}
		t.rows = [][]any{{int64(2), "heap", "t"}}
		return t, true
	case "pg_tablespace":
		t := vtable{cols: cols("oid:i spcname spcowner:i"), known: true}
		t.rows = [][]any{{int64(1663), "pg_default", int64(oidRoot)}}
		return t, true
	case "pg_stat_activity":
		return vtable{cols: cols(pgStatActivityCols), rows: s.h.acts.snapshot(), known: true}, true
	case "pg_constraint":
		return s.pgConstraint(), true
	case "pg_attrdef":
		return s.pgAttrdef(), true
	case "pg_foreign_table", "pg_foreign_server":
		return s.pgForeign(name), true
	case "pg_extension", "pg_index", "pg_description", "pg_proc",
		"pg_inherits", "pg_trigger", "pg_event_trigger", "pg_enum", "pg_range",
		"pg_collation", "pg_foreign_data_wrapper", "pg_depend",
		"pg_rewrite", "pg_sequence", "pg_partitioned_table", "pg_policy", "pg_statistic_ext", "pg_publication",
		"pg_subscription", "pg_language", "pg_operator", "pg_cast", "pg_aggregate", "pg_shdescription",
		"pg_auth_members", "pg_locks", "pg_prepared_xacts", "pg_stat_user_tables", "pg_indexes", "pg_sequences":
		// Sluice has none of these objects: a known, empty relation.
		return vtable{known: true}, true
	}
	return vtable{}, false
}

func (s *Session) pgClass(view string) vtable {
	t := vtable{cols: cols("oid:i relname relnamespace:i reltype:i relowner:i relam:i reltablespace:i reltuples:i relpages:i " +
		"relhasindex:b relisshared:b relpersistence relkind relnatts:i relchecks:i relhasrules:b relhastriggers:b relhassubclass:b " +
		"relrowsecurity:b relforcerowsecurity:b relispopulated:b relreplident relispartition:b reloptions relacl relpartbound " +
		"schemaname tablename matviewname viewname tableowner matviewowner viewowner hasindexes:b ispopulated:b definition"), known: true}
	for _, r := range s.relations("") {
		k := relkind(r.Kind)
		switch {
		case view == "pg_tables" && k != "r", view == "pg_matviews" && k != "m", view == "pg_views":
			continue
		}
		def := any(nil)
		if r.Kind == catalog.KindMaterializedView {
			def = viewQuery(r.Definition)
		}
		t.rows = append(t.rows, []any{int64(r.ID), r.Name, int64(oidPublic), int64(0), int64(oidRoot), int64(2), int64(0), int64(-1), int64(0),
			len(r.PK) > 0, false, "p", k, int64(len(visibleTypes(r))), int64(0), false, false, false,
			false, false, true, "d", false, nil, nil, nil,
			"public", r.Name, r.Name, nil, s.user, s.user, nil, len(r.PK) > 0, true, def})
	}
	return t
}

func (s *Session) pgAttribute() vtable {
	t := vtable{cols: cols("attrelid:i attname atttypid:i attlen:i attnum:i atttypmod:i attndims:i attnotnull:b atthasdef:b " +
		"atthasmissing:b attidentity attgenerated attisdropped:b attislocal:b attinhcount:i attcollation:i attstattarget:i attacl attoptions " +
		"attstorage attcompression"), known: true}
	for _, r := range s.relations("") {
		num := int64(0)
		for i, c := range r.Columns {
			if c.Hidden {
				continue
			}
			num++
			oid := int64(pgwire.OIDOf(c.Type))
			ti, _ := typeByOID(oid)
			t.rows = append(t.rows, []any{int64(r.ID), c.Name, oid, ti.length, num, typmodOf(c), int64(0), isPK(r, i) || c.NotNull, c.Default != "",
				false, "", "", false, true, int64(0), int64(0), int64(-1), nil, nil, attStorage(ti), ""})
		}
	}
	return t
}

// attStorage is attstorage: plain for fixed-width types, extended otherwise.
func attStorage(ti pgTypeInfo) string {
	if ti.length > 0 {
		return "p"
	}
	return "x"
}

func isPK(r *catalog.Relation, col int) bool {
	for _, k := range r.PK {
		if k == col {
			return true
		}
	}
	return false
}

func pgType() vtable {
	t := vtable{cols: cols("oid:i typname typnamespace:i typowner:i typlen:i typbyval:b typtype typcategory typispreferred:b " +
		"typisdefined:b typdelim typrelid:i typelem:i typarray:i typinput typoutput typreceive typsend typbasetype:i " +
		"typtypmod:i typndims:i typnotnull:b typcollation:i typdefault"), known: true}
	add := func(ti pgTypeInfo) {
		t.rows = append(t.rows, []any{ti.oid, ti.name, int64(oidPgCatalog), int64(oidRoot), ti.length, ti.length > 0 && ti.length <= 8,
			"b", ti.category, false, true, ",", int64(0), ti.elem, ti.array, ti.name + "in", ti.name + "out", ti.name + "recv",
			ti.name + "send", int64(0), int64(-1), int64(0), false, int64(0), nil})
	}
	for _, ti := range pgTypes {
		add(ti)
	}
	for _, ti := range pgTypes {
		arr, _ := typeByOID(ti.array)
		arr.name = "_" + ti.name
		add(arr)
	}
	for i := len(pgTypes); i < len(t.rows); i++ {
		t.rows[i][14], t.rows[i][15] = "array_in", "array_out"
	}
	return t
}

func (s *Session) infoSchemaTable(name string) (vtable, bool) {
	switch name {
	case "schemata":
		t := vtable{cols: cols("catalog_name schema_name schema_owner default_character_set_catalog default_character_set_schema default_character_set_name sql_path"), known: true}
		for _, n := range []string{"pg_catalog", "public", "information_schema"} {
			t.rows = append(t.rows, []any{s.db, n, s.user, nil, nil, nil, nil})
		}
		return t, true
	case "tables", "views":
		t := vtable{cols: cols("table_catalog table_schema table_name table_type self_referencing_column_name reference_generation " +
			"user_defined_type_catalog user_defined_type_schema user_defined_type_name is_insertable_into is_typed commit_action view_definition"), known: true}
		for _, r := range s.relations("") {
			// Postgres leaves materialized views out of information_schema.
			if r.Kind != catalog.KindTable || name == "views" {
				continue
			}
			t.rows = append(t.rows, []any{s.db, "public", r.Name, "BASE TABLE", nil, nil, nil, nil, nil, "YES", "NO", nil, nil})
		}
		return t, true
	case "columns":
		return s.infoColumns(), true
	case "table_constraints", "key_column_usage", "referential_constraints", "constraint_column_usage",
		"routines", "parameters", "sequences", "triggers", "check_constraints", "views_columns", "role_table_grants":
		return vtable{known: true}, true
	}
	return vtable{}, false
}

func (s *Session) infoColumns() vtable {
	t := vtable{cols: cols("table_catalog table_schema table_name column_name ordinal_position:i column_default is_nullable data_type " +
		"character_maximum_length:i numeric_precision:i numeric_scale:i datetime_precision:i udt_catalog udt_schema udt_name " +
		"is_identity is_generated is_updatable"), known: true}
	for _, r := range s.relations(catalog.KindTable) {
		pos := int64(0)
		for i, c := range r.Columns {
			if c.Hidden {
				continue
			}
			pos++
			ti, _ := typeByOID(int64(pgwire.OIDOf(c.Type)))
			nullable := "YES"
			if isPK(r, i) {
				nullable = "NO"
			}
			t.rows = append(t.rows, []any{s.db, "public", r.Name, c.Name, pos, nil, nullable, ti.display,
				nil, nil, nil, nil, s.db, "pg_catalog", ti.name, "NO", "NEVER", "YES"})
		}
	}
	return t
}

// oidConstraintBase offsets the OIDs of primary-key constraints from
// their relations' (a relation has at most one).
const oidConstraintBase = 2000000

// pgConstraint lists each primary key as constraint <name>_pkey, as
// Postgres names it; DBeaver and pgAdmin show keys from here.
func (s *Session) pgConstraint() vtable {
	t := vtable{cols: cols("oid:i conname connamespace:i contype condeferrable:b condeferred:b convalidated:b conrelid:i " +
		"contypid:i conindid:i confrelid:i confupdtype confdeltype confmatchtype conkey confkey conislocal:b coninhcount:i connoinherit:b"), known: true}
	for _, r := range s.relations("") {
		if len(r.PK) == 0 {
			continue
		}
		keys := make([]any, len(r.PK))
		for i, k := range r.PK {
			keys[i] = int64(attnum(r, k))
		}
		t.rows = append(t.rows, []any{int64(oidConstraintBase + r.ID), r.Name + "_pkey", int64(oidPublic), "p", false, false, true, int64(r.ID),
			int64(0), int64(0), int64(0), " ", " ", " ", keys, nil, true, int64(0), true})
	}
	return t
}

// attnum is the attribute number of column i: its position among the
// visible columns.
func attnum(r *catalog.Relation, i int) int {
	n := 0
	for j := 0; j <= i && j < len(r.Columns); j++ {
		if !r.Columns[j].Hidden {
			n++
		}
	}
	return n
}

// constraintDef is pg_get_constraintdef of a primary key.
func (s *Session) constraintDef(oid int64) any {
	r, ok := s.e.Catalog().ByID(uint32(oid - oidConstraintBase))
	if !ok || len(r.PK) == 0 {
		return nil
	}
	names := make([]string, len(r.PK))
	for i, k := range r.PK {
		names[i] = r.Columns[k].Name
	}
	return "PRIMARY KEY (" + strings.Join(names, ", ") + ")"
}

// oidFirstServer is the oid of the first connector's pg_foreign_server
// row.
const oidFirstServer = 9000

// pgForeign answers pg_foreign_table (a row per source, as psql's \d of a
// foreign table reads it) and pg_foreign_server (a row per connector), so
// psql describes a source, its connector shown as the server.
func (s *Session) pgForeign(name string) vtable {
	names := connector.Names()
	if name == "pg_foreign_server" {
		t := vtable{cols: cols("oid:i srvname srvowner:i srvfdw:i srvtype srvversion srvacl srvoptions"), known: true}
		for i, n := range names {
			t.rows = append(t.rows, []any{int64(oidFirstServer + i), n, int64(oidRoot), int64(0), nil, nil, nil, nil})
		}
		return t
	}
	t := vtable{cols: cols("ftrelid:i ftserver:i ftoptions"), known: true}
	for _, r := range s.relations(catalog.KindSource) {
		srv := slices.Index(names, r.Connector.Connector)
		t.rows = append(t.rows, []any{int64(r.ID), int64(oidFirstServer + srv), nil})
	}
	return t
}
