package session

import (
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/types"
)

// typmodOf is a column's atttypmod as Postgres encodes it: numeric(p, s)
// is ((p << 16) | s) + 4, varchar(n) is n + 4 (the 4 is VARHDRSZ),
// timestamp(p) and time(p) are p; -1 for none.
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
// modifier, as psql's \d shows it.
func formatType(oid, typmod int64) any {
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

// pgAttrdef lists column defaults; adbin holds the expression's SQL text,
// which pg_get_expr returns as is.
func (s *Session) pgAttrdef() vtable {
	t := vtable{cols: cols("oid:i adrelid:i adnum:i adbin"), known: true}
	for _, r := range s.relations("") {
		num := int64(0)
		for _, c := range r.Columns {
			if c.Hidden {
				continue
			}
			num++
			if c.Default != "" {
				t.rows = append(t.rows, []any{int64(r.ID)<<16 | num, int64(r.ID), num, c.Default})
			}
		}
	}
	return t
}
