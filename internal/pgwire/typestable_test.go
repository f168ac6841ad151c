package pgwire

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// typesTable is the result of the fake's `types` statement: one column per
// type Sluice speaks, with values at the edges of each type (written in
// Postgres's text input so that the test data does not depend on pgwire).
var typesTable = []struct {
	name   string
	typ    types.Type
	oid    uint32
	values []string
}{
	{"b", types.TBool, 0, []string{"true", "false", "t"}},
	{"i2", types.TInt16, 0, []string{"-32768", "32767", "0"}},
	{"i4", types.TInt32, 0, []string{"-2147483648", "2147483647", "42"}},
	{"i8", types.TInt64, 0, []string{"-9223372036854775808", "9223372036854775807", "-1"}},
	{"f4", types.TFloat32, 0, []string{"1.5", "-3.4028235e+38", "1e-45"}},
	{"f8", types.TFloat64, 0, []string{"0.1", "-1.7976931348623157e+308", "Infinity"}},
	{"n", types.TDecimal, 0, []string{"12345.6789", "-0.000100", "100000000000000000000.5"}},
	{"n2", types.TDecimal, 0, []string{"0", "1.50", "-99999999"}},
	{"s", types.TVarchar, 0, []string{"hello", "", "ünïcödé 日本 \t tab"}},
	{"t", types.TVarchar, OIDText, []string{"text", "a,b", `back\slash`}},
	{"by", types.TBytea, 0, []string{`\x00ff10`, `\x`, `\x68656c6c6f`}},
	{"d", types.TDate, 0, []string{"2024-02-29", "1970-01-01", "infinity"}},
	{"tm", types.TTime, 0, []string{"13:45:06.123456", "00:00:00", "24:00:00"}},
	{"ts", types.TTimestamp, 0, []string{"2024-02-29 13:45:06.5", "1969-12-31 23:59:59.999999", "-infinity"}},
	{"tz", types.TTimestamptz, 0, []string{"2000-01-01 00:00:00+00", "1999-12-31 23:59:59+00", "2262-04-11 23:47:16.854775+00"}},
	{"iv", types.TInterval, 0, []string{"1 year 2 mons 3 days 04:05:06.789", "-1 days +02:00:00", "00:00:00.000001"}},
}

func typesColumns() []Column {
	cols := make([]Column, len(typesTable))
	for i, c := range typesTable {
		cols[i] = Column{Name: c.name, Type: c.typ, OID: c.oid}
	}
	return cols
}

// typesRows returns the value rows and a final all-NULL row.
func typesRows() []types.Row {
	n := len(typesTable[0].values)
	rows := make([]types.Row, n+1)
	for r := 0; r < n; r++ {
		rows[r] = make(types.Row, len(typesTable))
		for c, col := range typesTable {
			d, err := types.ParseDatum(col.values[r], col.typ)
			if err != nil {
				panic(fmt.Sprintf("bad test value %q for %s: %v", col.values[r], col.typ, err))
			}
			rows[r][c] = d
		}
	}
	rows[n] = make(types.Row, len(typesTable))
	return rows
}

// sameDatum reports whether a and b are the same value of t: both NULL, or
// of the same Go type with the same text form (which keeps numeric scale
// and interval fields apart).
func sameDatum(a, b types.Datum, t types.Type) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		return false
	}
	return types.FormatDatum(a, t) == types.FormatDatum(b, t)
}
