package pgcatalog

import (
	"strconv"

	"github.com/sluice-db/sluice/internal/types"

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
			typeFacts(v, c)
			out = append(out, v)
		}
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// typeFacts fills a column's length, precision and scale as Postgres's
// information_schema.columns shows them.
func typeFacts(v vals, c catalog.Column) {
	m := c.Mod
	if m == nil {
		m = &types.Modifier{}
	}
	switch c.Type.ID {
	case types.Int16, types.Int32, types.Int64:
		v["numeric_precision"], v["numeric_precision_radix"], v["numeric_scale"] =
			map[types.ID]int64{types.Int16: 16, types.Int32: 32, types.Int64: 64}[c.Type.ID], int64(2), int64(0)
	case types.Float32, types.Float64:
		v["numeric_precision"], v["numeric_precision_radix"] = map[types.ID]int64{types.Float32: 24, types.Float64: 53}[c.Type.ID], int64(2)
	case types.Decimal:
		v["numeric_precision_radix"] = int64(10)
		if m.Precision > 0 {
			v["numeric_precision"], v["numeric_scale"] = int64(m.Precision), int64(m.Scale)
		}
	case types.Varchar:
		if m.Length > 0 {
			v["character_maximum_length"], v["character_octet_length"] = int64(m.Length), int64(4*m.Length)
		} else {
			v["character_octet_length"] = int64(1 << 30)
		}
	case types.Date:
		v["datetime_precision"] = int64(0)
	case types.Time, types.Timestamp, types.Timestamptz, types.Interval:
		v["datetime_precision"] = int64(6)
		if m.HasFrac {
			v["datetime_precision"] = int64(m.Frac)
		}
	case types.Array:
		v["data_type"] = "ARRAY"
	}
}
