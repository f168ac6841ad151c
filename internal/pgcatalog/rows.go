package pgcatalog

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluice-db/sluice/internal/pgkeywords"
	"github.com/sluice-db/sluice/internal/types"
)

// OIDs as Postgres assigns them where it fixes them; the rest are any
// stable values. A relation's oid is its Sluice id.
const (
	oidPgCatalog  = 11
	oidPublic     = 2200
	oidInfoSchema = 13000
	oidSluice     = 13100 // sluice_catalog
	oidDatabase   = 16384
	oidRoot       = 10
	oidFirstUser  = 16000 // the catalog's other users, in name order
	oidTablespace = 1663
	oidHeap       = 2
	// oidConstraintBase offsets a primary key's constraint oid from its
	// relation's (a relation has at most one).
	oidConstraintBase = 2000000
	// oidFirstServer is the first connector's pg_foreign_server oid.
	oidFirstServer = 9000
	// encodingUTF8 is pg_database.encoding of UTF8.
	encodingUTF8 = 6
)

// schemas are the namespaces: name and oid.
var schemas = []struct {
	name string
	oid  int64
}{{pgCatalog, oidPgCatalog}, {"public", oidPublic}, {infoSchema, oidInfoSchema}, {"sluice_catalog", oidSluice}}

// Rows produces r's rows as src sees them now. A relation's rows (not a
// function's) end with the system column tableoid, the relation's oid,
// which the planner binds as a hidden column.
func Rows(r *Relation, src Source) []types.Row {
	p, ok := producers[r.Schema+"."+r.Name]
	if !ok {
		return nil // Sluice has no such objects
	}
	_, fn := FunctionRelation(r.Name)
	oid := tableOID(r)
	var out []types.Row
	for _, v := range p(src) {
		row := r.row(v)
		if !fn {
			row = append(row, oid)
		}
		out = append(out, row)
	}
	if static, ok := staticRows[r.Schema+"."+r.Name]; ok {
		out = append(out, static()...)
	}
	return out
}

// staticRows are rows that never change, made once: pg_class's and
// pg_attribute's rows of pg_catalog's and information_schema's own
// relations (2 400 rows, most of every catalog query's reading). They
// are shared, so no reader may change them.
var staticRows = map[string]func() []types.Row{
	"pg_catalog.pg_class": sync.OnceValue(func() []types.Row {
		return staticOf("pg_class", func(s sysRel) []vals { return []vals{systemClassRow(s)} })
	}),
	"pg_catalog.pg_attribute": sync.OnceValue(func() []types.Row {
		return staticOf("pg_attribute", systemAttributes)
	}),
}

// staticOf lays out relation name's rows made by f for each Postgres
// system relation.
func staticOf(name string, f func(sysRel) []vals) []types.Row {
	r := relations()[pgCatalog+"."+name]
	oid := tableOID(r)
	var out []types.Row
	for _, s := range postgresRelations() {
		for _, v := range f(s) {
			out = append(out, append(r.row(v), oid))
		}
	}
	return out
}

// tableOID is the oid of relation r of pg_catalog or information_schema.
func tableOID(r *Relation) int64 {
	for i, s := range relationSpecs {
		if s.schema == r.Schema && s.name == r.Name {
			return oidSystemRelBase + int64(i)
		}
	}
	return 0
}

// producers make the rows of the relations Sluice has objects for.
var producers map[string]func(Source) []vals

func init() {
	producers = map[string]func(Source) []vals{
		"pg_catalog.pg_namespace":                    namespaces,
		"pg_catalog.pg_class":                        pgClass,
		"pg_catalog.pg_tables":                       pgTables,
		"pg_catalog.pg_matviews":                     pgMatviews,
		"pg_catalog.pg_attribute":                    pgAttribute,
		"pg_catalog.pg_attrdef":                      pgAttrdef,
		"pg_catalog.pg_type":                         pgType,
		"pg_catalog.pg_constraint":                   pgConstraint,
		"pg_catalog.pg_database":                     pgDatabase,
		"pg_catalog.pg_settings":                     pgSettings,
		"pg_catalog.pg_show_all_settings":            pgSettings,
		"pg_catalog.pg_roles":                        pgRoles,
		"pg_catalog.pg_authid":                       pgRoles,
		"pg_catalog.pg_user":                         pgRoles,
		"pg_catalog.pg_shadow":                       pgRoles,
		"pg_catalog.pg_am":                           pgAm,
		"pg_catalog.pg_index":                        pgIndex,
		"pg_catalog.pg_indexes":                      pgIndexes,
		"pg_catalog.pg_tablespace":                   pgTablespace,
		"pg_catalog.pg_stat_activity":                pgStatActivity,
		"pg_catalog.pg_foreign_table":                pgForeignTable,
		"pg_catalog.pg_foreign_server":               pgForeignServer,
		"pg_catalog.pg_get_keywords":                 keywords,
		"information_schema.schemata":                infoSchemata,
		"information_schema.tables":                  infoTables,
		"information_schema.columns":                 infoColumns,
		"information_schema.table_constraints":       infoTableConstraints,
		"information_schema.key_column_usage":        infoKeyColumnUsage,
		"information_schema.constraint_column_usage": infoConstraintColumnUsage,
	}
}

func namespaces(Source) []vals {
	var out []vals
	for _, s := range schemas {
		out = append(out, vals{"oid": s.oid, "nspname": s.name, "nspowner": int64(oidRoot)})
	}
	return out
}

func pgAm(Source) []vals {
	return []vals{{"oid": int64(oidHeap), "amname": "heap", "amtype": "t"}, {"oid": int64(oidBtree), "amname": "btree", "amtype": "i"}}
}

func pgDatabase(src Source) []vals {
	return []vals{{"oid": int64(oidDatabase), "datname": src.Database(), "datdba": int64(oidRoot), "encoding": int64(encodingUTF8),
		"datlocprovider": "c", "datistemplate": false, "datallowconn": true, "datconnlimit": int64(-1),
		"dattablespace": int64(oidTablespace), "datcollate": "C.UTF-8", "datctype": "C.UTF-8"}}
}

func pgTablespace(Source) []vals {
	return []vals{{"oid": int64(oidTablespace), "spcname": "pg_default", "spcowner": int64(oidRoot)}}
}

// readOnlySettings are fixed limits drivers read from pg_settings or
// current_setting (JDBC's getMaxIndexKeys, version checks).
var readOnlySettings = []Setting{
	{"max_index_keys", "32", "Maximum number of index keys."},
	{"block_size", "8192", "Size of a disk block."},
	{"server_version_num", "150000", "Server version as an integer."},
	{"max_function_args", "100", "Maximum number of function arguments."},
	{"lc_collate", "C.UTF-8", "Collation order locale."},
	{"lc_ctype", "C.UTF-8", "Character classification locale."},
}

// ReadOnlySetting finds a fixed setting by name.
func ReadOnlySetting(name string) (Setting, bool) {
	i := slices.IndexFunc(readOnlySettings, func(s Setting) bool { return s.Name == strings.ToLower(name) })
	if i < 0 {
		return Setting{}, false
	}
	return readOnlySettings[i], true
}

// settings are the session's settings and the fixed ones, by name.
func settings(src Source) []Setting {
	all := src.Settings()
	for _, v := range readOnlySettings {
		if !slices.ContainsFunc(all, func(a Setting) bool { return a.Name == v.Name }) {
			all = append(all, v)
		}
	}
	slices.SortFunc(all, func(a, b Setting) int { return strings.Compare(a.Name, b.Name) })
	return all
}

func pgSettings(src Source) []vals {
	var out []vals
	for _, v := range settings(src) {
		out = append(out, vals{"name": v.Name, "setting": v.Value, "category": "Sluice", "short_desc": v.Description,
			"context": "user", "vartype": "string", "source": "default", "boot_val": v.Value, "reset_val": v.Value,
			"pending_restart": false})
	}
	return out
}

// userOID is the oid of user name: root's is 10, the others' follow in
// name order; a name the catalog does not know (a trusted client's) gets
// 11.
func userOID(src Source, name string) int64 {
	if name == "root" {
		return oidRoot
	}
	for i, u := range src.Users() {
		if u.Name == name {
			return int64(oidFirstUser + i)
		}
	}
	return oidRoot + 1
}

// userName is pg_get_userbyid: nil for an unknown oid.
func userName(src Source, oid int64) types.Datum {
	for _, u := range src.Users() {
		if userOID(src, u.Name) == oid {
			return u.Name
		}
	}
	if oid == oidRoot || oid == oidRoot+1 {
		if oid == oidRoot {
			return "root"
		}
		return src.User()
	}
	return nil
}

func pgRoles(src Source) []vals {
	var out []vals
	add := func(name string, su bool) {
		oid := userOID(src, name)
		out = append(out, vals{"oid": oid, "rolname": name, "usename": name, "usesysid": oid, "rolsuper": su, "usesuper": su,
			"rolinherit": true, "rolcreaterole": su, "rolcreatedb": su, "usecreatedb": su, "rolcanlogin": true,
			"rolreplication": false, "userepl": false, "rolconnlimit": int64(-1), "rolbypassrls": su, "usebypassrls": su,
			"rolpassword": "********", "passwd": "********"})
	}
	known := false
	for _, u := range src.Users() {
		add(u.Name, u.Superuser)
		known = known || u.Name == src.User()
	}
	if !known {
		add(src.User(), true)
	}
	return out
}

func pgStatActivity(src Source) []vals {
	var out []vals
	for _, b := range src.Backends() {
		out = append(out, vals{"datid": int64(oidDatabase), "datname": b.Database, "pid": int64(b.PID),
			"usesysid": userOID(src, b.User), "usename": b.User, "application_name": b.Application,
			"client_addr": nilIfEmpty(b.Client), "backend_start": stamp(b.BackendStart), "xact_start": stamp(b.XactStart),
			"query_start": stamp(b.QueryStart), "state_change": stamp(b.StateChange), "state": b.State, "query": b.Query,
			"backend_type": "client backend"})
	}
	return out
}

func nilIfEmpty(s string) types.Datum {
	if s == "" {
		return nil
	}
	return s
}

// stamp is a timestamptz, NULL for the zero time.
func stamp(t time.Time) types.Datum {
	if t.IsZero() {
		return nil
	}
	return types.TimestamptzFromTime(t)
}

func pgForeignServer(src Source) []vals {
	var out []vals
	for i, n := range src.Connectors() {
		out = append(out, vals{"oid": int64(oidFirstServer + i), "srvname": n, "srvowner": int64(oidRoot), "srvfdw": int64(0)})
	}
	return out
}

func pgForeignTable(src Source) []vals {
	var out []vals
	names := src.Connectors()
	for _, r := range src.Relations() {
		if r.Connector == nil {
			continue
		}
		srv := slices.Index(names, r.Connector.Connector)
		out = append(out, vals{"ftrelid": int64(r.ID), "ftserver": int64(oidFirstServer + srv)})
	}
	return out
}

// keywordCategories describes pg_get_keywords' catcode.
var keywordCategories = map[byte]string{
	'U': "unreserved", 'C': "unreserved (cannot be function or type name)",
	'T': "reserved (can be function or type name)", 'R': "reserved",
}

func keywords(Source) []vals {
	var out []vals
	for _, k := range pgkeywords.All() {
		desc := "requires AS"
		if k.BareLabel {
			desc = "can be bare label"
		}
		out = append(out, vals{"word": k.Word, "catcode": string(k.Category), "barelabel": k.BareLabel,
			"catdesc": keywordCategories[k.Category], "baredesc": desc})
	}
	return out
}
