package pgcatalog

import (
	"fmt"
	"strings"
	"sync"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/types"
)

// typeInfo describes one row of pg_type.
type typeInfo struct {
	oid      int64
	name     string // typname
	display  string // format_type
	length   int64
	category string
	elem     int64 // element type of an array type
	array    int64 // array type of a base type
}

// baseTypes lists the types Sluice speaks; each has an array type.
var baseTypes = []typeInfo{
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
	{2205, "regclass", "regclass", 4, "N", 0, 2210},
	{2206, "regtype", "regtype", 4, "N", 0, 2211},
	{24, "regproc", "regproc", 4, "N", 0, 1008},
	{4089, "regnamespace", "regnamespace", 4, "N", 0, 4090},
	{4096, "regrole", "regrole", 4, "N", 0, 4097},
}

// allTypes lists the base types, then their array types.
var allTypes = sync.OnceValue(func() []typeInfo {
	out := append([]typeInfo(nil), baseTypes...)
	for _, t := range baseTypes {
		out = append(out, typeInfo{oid: t.array, name: "_" + t.name, display: t.display + "[]", length: -1, category: "A", elem: t.oid})
	}
	return out
})

var typesByOID = sync.OnceValue(func() map[int64]typeInfo {
	out := map[int64]typeInfo{}
	for _, t := range allTypes() {
		out[t.oid] = t
	}
	return out
})

// typeByOID finds a pg_type row, arrays included.
func typeByOID(oid int64) (typeInfo, bool) {
	t, ok := typesByOID()[oid]
	return t, ok
}

// typeByName finds a type by its typname or its format_type name.
func typeByName(name string) (typeInfo, bool) {
	name = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "pg_catalog.")
	if i := strings.IndexByte(name, '('); i > 0 { // varchar(10): the modifier is not the type
		if j := strings.IndexByte(name[i:], ')'); j > 0 {
			name = strings.TrimSpace(name[:i] + name[i+j+1:])
		}
	}
	for _, t := range allTypes() {
		if t.name == name || t.display == name {
			return t, true
		}
	}
	if t, ok := types.ParseTypeName(name); ok {
		return typeByOID(int64(pgwire.OIDOf(t)))
	}
	return typeInfo{}, false
}

// typmodOf is a column's atttypmod, as Postgres encodes it.
func typmodOf(c catalog.Column) int64 {
	m := c.Mod
	switch {
	case m == nil:
		return -1
	case m.Precision > 0:
		return int64(m.Precision)<<16 | int64(uint16(m.Scale)) + 4
	case m.Length > 0:
		return int64(m.Length) + 4
	case m.HasFrac:
		return int64(m.Frac)
	}
	return -1
}

// formatType is format_type(oid, typmod): the type's name with its
// modifier, as psql's \d shows it; NULL for an unknown type.
func formatType(oid, typmod int64) types.Datum {
	ti, ok := typeByOID(oid)
	if !ok {
		return nil
	}
	if typmod < 0 {
		return ti.display
	}
	switch ti.oid {
	case int64(pgwire.OIDOf(types.TDecimal)):
		v := typmod - 4
		return fmt.Sprintf("numeric(%d,%d)", v>>16, int16(v&0xffff))
	case int64(pgwire.OIDOf(types.TVarchar)):
		return fmt.Sprintf("character varying(%d)", typmod-4)
	case int64(pgwire.OIDOf(types.TTimestamp)), int64(pgwire.OIDOf(types.TTimestamptz)), int64(pgwire.OIDOf(types.TTime)):
		name, rest, _ := strings.Cut(ti.display, " ")
		return fmt.Sprintf("%s(%d) %s", name, typmod, rest)
	}
	return ti.display
}
