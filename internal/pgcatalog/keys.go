package pgcatalog

import (
	"strings"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgkeywords"
	"github.com/sluice-db/sluice/internal/types"
)

// A table's declared primary key shows as Postgres shows one: a
// constraint <table>_pkey (pg_constraint) backed by a unique btree index
// of the same name (pg_class relkind 'i', pg_index), which psql's \d,
// JDBC's getPrimaryKeys and getIndexInfo and GUI tools read. It is what
// Sluice's table is: rows kept in key order, one per key. A table with
// no declared key (its rows keyed by a hidden row id) and a view have
// none.

// oidIndexBase offsets a primary key index's oid from its table's.
const oidIndexBase = 3_200_000_000

// oidBtree is pg_am's btree.
const oidBtree = 403

// hasKey reports whether r is a table with a declared primary key.
func hasKey(r *catalog.Relation) bool {
	if r.Kind != catalog.KindTable || len(r.PK) == 0 {
		return false
	}
	for _, k := range r.PK {
		if k >= len(r.Columns) || r.Columns[k].Hidden {
			return false
		}
	}
	return true
}

// indexOID is the oid of r's primary key index, 0 without one.
func indexOID(r *catalog.Relation) int64 {
	if !hasKey(r) {
		return 0
	}
	return oidIndexBase + int64(r.ID)
}

// keyAttnums are the attribute numbers of r's key columns.
func keyAttnums(r *catalog.Relation) types.DArray {
	keys := make(types.DArray, len(r.PK))
	for i, k := range r.PK {
		keys[i] = attnum(r, k)
	}
	return keys
}

// keyTables lists the relations with a declared primary key.
func keyTables(src Source) []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range src.Relations() {
		if hasKey(r) {
			out = append(out, r)
		}
	}
	return out
}

// indexClassRows are the pg_class rows of the primary key indexes.
func indexClassRows(src Source) []vals {
	var out []vals
	for _, r := range keyTables(src) {
		out = append(out, vals{"oid": indexOID(r), "relname": r.Name + "_pkey", "relnamespace": int64(oidPublic),
			"reltype": int64(0), "reloftype": int64(0), "relowner": userOID(src, owner(src, r)), "relam": int64(oidBtree),
			"relfilenode": indexOID(r), "reltablespace": int64(0), "relpages": int64(0), "reltuples": float64(-1),
			"relallvisible": int64(0), "reltoastrelid": int64(0), "relhasindex": false, "relisshared": false,
			"relpersistence": "p", "relkind": "i", "relnatts": int64(len(r.PK)), "relchecks": int64(0),
			"relhasrules": false, "relhastriggers": false, "relhassubclass": false, "relrowsecurity": false,
			"relforcerowsecurity": false, "relispopulated": true, "relreplident": "n", "relispartition": false,
			"relrewrite": int64(0), "relfrozenxid": "0", "relminmxid": "0"})
	}
	return out
}

// indexAttributes are the pg_attribute rows of the indexes: their key
// columns, numbered from 1.
func indexAttributes(src Source) []vals {
	var out []vals
	for _, r := range keyTables(src) {
		for i, k := range r.PK {
			out = append(out, attribute(indexOID(r), int64(i+1), r.Columns[k], false))
		}
	}
	return out
}

func pgIndex(src Source) []vals {
	var out []vals
	for _, r := range keyTables(src) {
		n := len(r.PK)
		zeros := func() types.DArray {
			a := make(types.DArray, n)
			for i := range a {
				a[i] = int64(0)
			}
			return a
		}
		out = append(out, vals{"indexrelid": indexOID(r), "indrelid": int64(r.ID), "indnatts": int64(n),
			"indnkeyatts": int64(n), "indisunique": true, "indnullsnotdistinct": false, "indisprimary": true,
			"indisexclusion": false, "indimmediate": true, "indisclustered": false, "indisvalid": true,
			"indcheckxmin": false, "indisready": true, "indislive": true, "indisreplident": false,
			"indkey": keyAttnums(r), "indcollation": zeros(), "indclass": zeros(), "indoption": zeros()})
	}
	return out
}

func pgIndexes(src Source) []vals {
	var out []vals
	for _, r := range keyTables(src) {
		out = append(out, vals{"schemaname": "public", "tablename": r.Name, "indexname": r.Name + "_pkey",
			"indexdef": indexDef(r, 0)})
	}
	return out
}

// indexDef is pg_get_indexdef(index, col): the CREATE INDEX statement
// for col 0, else the col'th key column's name.
func indexDef(r *catalog.Relation, col int64) types.Datum {
	if col > 0 {
		if col > int64(len(r.PK)) {
			return ""
		}
		return pgkeywords.QuoteIdent(r.Columns[r.PK[col-1]].Name)
	}
	names := make([]string, len(r.PK))
	for i, k := range r.PK {
		names[i] = pgkeywords.QuoteIdent(r.Columns[k].Name)
	}
	return "CREATE UNIQUE INDEX " + pgkeywords.QuoteIdent(r.Name+"_pkey") + " ON public." + pgkeywords.QuoteIdent(r.Name) +
		" USING btree (" + strings.Join(names, ", ") + ")"
}

// indexByOID finds the table whose primary key index has oid.
func indexByOID(src Source, oid int64) *catalog.Relation {
	for _, r := range keyTables(src) {
		if indexOID(r) == oid {
			return r
		}
	}
	return nil
}

func infoTableConstraints(src Source) []vals {
	var out []vals
	for _, r := range keyTables(src) {
		out = append(out, vals{"constraint_catalog": src.Database(), "constraint_schema": "public",
			"constraint_name": r.Name + "_pkey", "table_catalog": src.Database(), "table_schema": "public",
			"table_name": r.Name, "constraint_type": "PRIMARY KEY", "is_deferrable": "NO",
			"initially_deferred": "NO", "enforced": "YES"})
	}
	return out
}

func infoKeyColumnUsage(src Source) []vals {
	var out []vals
	for _, r := range keyTables(src) {
		for i, k := range r.PK {
			out = append(out, vals{"constraint_catalog": src.Database(), "constraint_schema": "public",
				"constraint_name": r.Name + "_pkey", "table_catalog": src.Database(), "table_schema": "public",
				"table_name": r.Name, "column_name": r.Columns[k].Name, "ordinal_position": int64(i + 1)})
		}
	}
	return out
}

func infoConstraintColumnUsage(src Source) []vals {
	var out []vals
	for _, r := range keyTables(src) {
		for _, k := range r.PK {
			out = append(out, vals{"table_catalog": src.Database(), "table_schema": "public", "table_name": r.Name,
				"column_name": r.Columns[k].Name, "constraint_catalog": src.Database(), "constraint_schema": "public",
				"constraint_name": r.Name + "_pkey"})
		}
	}
	return out
}
