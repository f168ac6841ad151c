package pgcatalog

import (
	"strconv"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
)

// information_schema lists tables only: Postgres leaves materialized
// views (and foreign tables' options) out of it.

func infoSchemata(src Source) []vals {
	var out []vals
	for _, s := range schemas {
		out = append(out, vals{"catalog_name": src.Database(), "schema_name": s.name, "schema_owner": "root"})
	}
	return out
}

func infoTables(src Source) []vals {
	var out []vals
	for _, r := range src.Relations() {
		if r.Kind != catalog.KindTable {
			continue
		}
		out = append(out, vals{"table_catalog": src.Database(), "table_schema": "public", "table_name": r.Name,
			"table_type": "BASE TABLE", "is_insertable_into": "YES", "is_typed": "NO"})
	}
	return out
}

func infoColumns(src Source) []vals {
	var out []vals
	for _, r := range src.Relations() {
		if r.Kind != catalog.KindTable {
			continue
		}
		cols, idx := visibleColumns(r)
		for n, c := range cols {
			ti, _ := typeByOID(int64(pgwire.OIDOf(c.Type)))
			nullable := "YES"
			if isPK(r, idx[n]) || c.NotNull {
				nullable = "NO"
			}
			v := vals{"table_catalog": src.Database(), "table_schema": "public", "table_name": r.Name, "column_name": c.Name,
				"ordinal_position": int64(n + 1), "is_nullable": nullable, "data_type": ti.display,
				"udt_catalog": src.Database(), "udt_schema": pgCatalog, "udt_name": ti.name, "dtd_identifier": itoa(n + 1),
				"is_self_referencing": "NO", "is_identity": "NO", "is_generated": "NEVER", "is_updatable": "YES"}
			if c.Default != "" {
				v["column_default"] = c.Default
			}
			if m := c.Mod; m != nil && m.Length > 0 {
				v["character_maximum_length"] = int64(m.Length)
			}
			if m := c.Mod; m != nil && m.Precision > 0 {
				v["numeric_precision"], v["numeric_scale"] = int64(m.Precision), int64(m.Scale)
			}
			out = append(out, v)
		}
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
