package pgcatalog

import (
	"slices"
	"strings"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/types"
)

// relkind is pg_class.relkind of a relation: a source shows as a foreign
// table (rows from outside), as psql describes it.
func relkind(k catalog.Kind) string {
	switch k {
	case catalog.KindMaterializedView:
		return "m"
	case catalog.KindSource:
		return "f"
	}
	return "r"
}

// owner is a relation's owner's name.
func owner(src Source, r *catalog.Relation) string {
	if r.Owner != "" {
		return r.Owner
	}
	return "root"
}

// visibleColumns lists r's columns a client sees, with their indexes.
func visibleColumns(r *catalog.Relation) (cols []catalog.Column, idx []int) {
	for i, c := range r.Columns {
		if !c.Hidden {
			cols, idx = append(cols, c), append(idx, i)
		}
	}
	return cols, idx
}

// attnum is the attribute number of column i: its position among the
// visible columns.
func attnum(r *catalog.Relation, i int) int64 {
	n := int64(0)
	for j := 0; j <= i && j < len(r.Columns); j++ {
		if !r.Columns[j].Hidden {
			n++
		}
	}
	return n
}

// isPK reports whether column col is part of r's declared primary key.
func isPK(r *catalog.Relation, col int) bool {
	return hasKey(r) && slices.Contains(r.PK, col)
}

func pgClass(src Source) []vals {
	var out []vals
	for _, r := range src.Relations() {
		cols, _ := visibleColumns(r)
		out = append(out, vals{"oid": int64(r.ID), "relname": r.Name, "relnamespace": int64(oidPublic), "reltype": int64(0),
			"reloftype": int64(0), "relowner": userOID(src, owner(src, r)), "relam": int64(oidHeap), "relfilenode": int64(r.ID),
			"reltablespace": int64(0), "relpages": int64(0), "reltuples": float64(-1), "relallvisible": int64(0),
			"reltoastrelid": int64(0), "relhasindex": hasKey(r), "relisshared": false, "relpersistence": "p",
			"relkind": relkind(r.Kind), "relnatts": int64(len(cols)), "relchecks": int64(0), "relhasrules": false,
			"relhastriggers": false, "relhassubclass": false, "relrowsecurity": false, "relforcerowsecurity": false,
			"relispopulated": true, "relreplident": "d", "relispartition": false, "relrewrite": int64(0),
			"relfrozenxid": "0", "relminmxid": "0"})
	}
	out = append(out, indexClassRows(src)...)
	for _, s := range sluiceRelations(src) {
		out = append(out, systemClassRow(s))
	}
	return out // then pg_catalog's and information_schema's (staticRows)
}

// systemClassRow is the pg_class row of a system relation.
func systemClassRow(s sysRel) vals {
	kind := "r"
	if s.view {
		kind = "v"
	}
	return vals{"oid": s.oid, "relname": s.rel.Name, "relnamespace": s.nspOID, "reltype": int64(0),
		"reloftype": int64(0), "relowner": int64(oidRoot), "relam": int64(0), "relfilenode": int64(0),
		"reltablespace": int64(0), "relpages": int64(0), "reltuples": float64(-1), "relallvisible": int64(0),
		"reltoastrelid": int64(0), "relhasindex": false, "relisshared": false, "relpersistence": "p",
		"relkind": kind, "relnatts": int64(len(s.rel.Columns)), "relchecks": int64(0), "relhasrules": false,
		"relhastriggers": false, "relhassubclass": false, "relrowsecurity": false, "relforcerowsecurity": false,
		"relispopulated": true, "relreplident": "n", "relispartition": false, "relrewrite": int64(0),
		"relfrozenxid": "0", "relminmxid": "0"}
}

func pgTables(src Source) []vals {
	var out []vals
	for _, r := range src.Relations() {
		if r.Kind == catalog.KindTable {
			out = append(out, vals{"schemaname": "public", "tablename": r.Name, "tableowner": owner(src, r),
				"hasindexes": hasKey(r), "hasrules": false, "hastriggers": false, "rowsecurity": false})
		}
	}
	return out
}

func pgMatviews(src Source) []vals {
	var out []vals
	for _, r := range src.Relations() {
		if r.Kind == catalog.KindMaterializedView {
			out = append(out, vals{"schemaname": "public", "matviewname": r.Name, "matviewowner": owner(src, r),
				"hasindexes": false, "ispopulated": true, "definition": ViewQuery(r.Definition)})
		}
	}
	return out
}

// ViewQuery is the SELECT of a CREATE MATERIALIZED VIEW … AS statement,
// which is what pg_get_viewdef returns.
func ViewQuery(def string) string {
	up := strings.ToUpper(def)
	if i := strings.Index(up, " AS "); i >= 0 && strings.HasPrefix(up, "CREATE") {
		return strings.TrimSpace(def[i+4:])
	}
	return def
}

func pgAttribute(src Source) []vals {
	var out []vals
	for _, r := range src.Relations() {
		cols, idx := visibleColumns(r)
		for n, c := range cols {
			out = append(out, attribute(int64(r.ID), int64(n+1), c, isPK(r, idx[n]) || c.NotNull))
		}
	}
	out = append(out, indexAttributes(src)...)
	for _, s := range sluiceRelations(src) {
		out = append(out, systemAttributes(s)...)
	}
	return out // then pg_catalog's and information_schema's (staticRows)
}

// systemAttributes are the pg_attribute rows of a system relation.
func systemAttributes(s sysRel) []vals {
	var out []vals
	for n, c := range s.rel.Columns {
		out = append(out, attribute(s.oid, int64(n+1), c, false))
	}
	return out
}

// attribute is the pg_attribute row of column c, number num, of rel.
func attribute(rel, num int64, c catalog.Column, notNull bool) vals {
	oid := int64(pgwire.OIDOf(c.Type))
	ti, _ := typeByOID(oid)
	dims := int64(0)
	if c.Type.IsArray() {
		dims = 1
	}
	return vals{"attrelid": rel, "attname": c.Name, "atttypid": oid, "attstattarget": int64(-1),
		"attlen": ti.length, "attnum": num, "attndims": dims, "attcacheoff": int64(-1),
		"atttypmod": typmodOf(c), "attbyval": ti.length > 0 && ti.length <= 8, "attalign": "i",
		"attstorage": attStorage(ti), "attcompression": "", "attnotnull": notNull,
		"atthasdef": c.Default != "", "atthasmissing": false, "attidentity": "", "attgenerated": "",
		"attisdropped": false, "attislocal": true, "attinhcount": int64(0), "attcollation": int64(0)}
}

// attStorage is attstorage: plain for fixed-width types, extended otherwise.
func attStorage(ti typeInfo) string {
	if ti.length > 0 {
		return "p"
	}
	return "x"
}

// pgAttrdef lists column defaults; adbin holds the expression's SQL
// text, which pg_get_expr returns as it is.
func pgAttrdef(src Source) []vals {
	var out []vals
	for _, r := range src.Relations() {
		cols, _ := visibleColumns(r)
		for n, c := range cols {
			if c.Default != "" {
				num := int64(n + 1)
				out = append(out, vals{"oid": int64(r.ID)<<16 | num, "adrelid": int64(r.ID), "adnum": num, "adbin": c.Default})
			}
		}
	}
	return out
}

func pgType(Source) []vals {
	var out []vals
	for _, ti := range allTypes() {
		sep := ""
		if underscoredIO[ti.name] {
			sep = "_" // date_in, numeric_in, … as Postgres names them
		}
		in, outFn, recv, send := ti.name+sep+"in", ti.name+sep+"out", ti.name+sep+"recv", ti.name+sep+"send"
		if ti.elem != 0 {
			in, outFn, recv, send = "array_in", "array_out", "array_recv", "array_send"
		}
		out = append(out, vals{"oid": ti.oid, "typname": ti.name, "typnamespace": int64(oidPgCatalog), "typowner": int64(oidRoot),
			"typlen": ti.length, "typbyval": ti.length > 0 && ti.length <= 8, "typtype": "b", "typcategory": ti.category,
			"typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": int64(0), "typsubscript": "-",
			"typelem": ti.elem, "typarray": arrayOf(ti), "typinput": in, "typoutput": outFn, "typreceive": recv, "typsend": send,
			"typmodin": "-", "typmodout": "-", "typanalyze": "-", "typalign": "i", "typstorage": attStorage(ti),
			"typnotnull": false, "typbasetype": int64(0), "typtypmod": int64(-1), "typndims": int64(0), "typcollation": int64(0)})
	}
	return out
}

// underscoredIO are the types whose input and output functions are
// named type_in, not typein.
var underscoredIO = map[string]bool{"date": true, "time": true, "timestamp": true, "timestamptz": true,
	"interval": true, "numeric": true}

func arrayOf(ti typeInfo) int64 {
	if ti.elem != 0 {
		return 0
	}
	return ti.array
}

// pgConstraint lists each primary key as constraint <name>_pkey, as
// Postgres names it; DBeaver and pgAdmin show keys from here.
func pgConstraint(src Source) []vals {
	var out []vals
	for _, r := range src.Relations() {
		if !hasKey(r) {
			continue
		}
		keys := keyAttnums(r)
		out = append(out, vals{"oid": int64(oidConstraintBase + r.ID), "conname": r.Name + "_pkey",
			"connamespace": int64(oidPublic), "contype": "p", "condeferrable": false, "condeferred": false,
			"convalidated": true, "conrelid": int64(r.ID), "contypid": int64(0), "conindid": indexOID(r), "conparentid": int64(0),
			"confrelid": int64(0), "confupdtype": " ", "confdeltype": " ", "confmatchtype": " ", "conislocal": true,
			"coninhcount": int64(0), "connoinherit": true, "conkey": keys})
	}
	return out
}

// constraintDef is pg_get_constraintdef of a primary key.
func constraintDef(src Source, oid int64) types.Datum {
	r := relationByID(src, oid-oidConstraintBase)
	if r == nil || !hasKey(r) {
		return nil
	}
	names := make([]string, len(r.PK))
	for i, k := range r.PK {
		names[i] = r.Columns[k].Name
	}
	return "PRIMARY KEY (" + strings.Join(names, ", ") + ")"
}

// relationByID finds a relation by its oid.
func relationByID(src Source, oid int64) *catalog.Relation {
	for _, r := range src.Relations() {
		if int64(r.ID) == oid {
			return r
		}
	}
	return nil
}

// relationByName finds a relation by its name, which may be qualified
// with public (or be quoted).
func relationByName(src Source, name string) *catalog.Relation {
	name = unquote(strings.TrimPrefix(name, "public."))
	for _, r := range src.Relations() {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// unquote reads an identifier as Postgres does: a quoted one as it is,
// another folded to lower case.
func unquote(name string) string {
	if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
		return strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	}
	return strings.ToLower(name)
}
