package session

import (
	"strconv"

	"github.com/sluice-db/sluice/internal/catalog"
)

// psql (15) sends fixed catalog queries for its \d family (see `psql -E`):
// \d, \dt, \dm [pattern] list pg_class joined with pg_namespace filtered
// by relkind and a regular expression on relname; \d name looks the name
// up, then reads the relation's pg_class row and its pg_attribute rows by
// OID. None of them is special-cased: catalogeval.go evaluates them over
// the virtual tables of catalogtables.go like any driver's or GUI tool's
// query, so \d+, \l, \dn, \du and friends work too. Every relation lives
// in schema public and is owned by the session's user.

func itoa(i int) string { return strconv.Itoa(i) }

// relkind is pg_class.relkind of a relation.
func relkind(k catalog.Kind) string {
	switch k {
	case catalog.KindMaterializedView:
		return "m"
	case catalog.KindSource:
		return "f" // psql shows a foreign table: rows from outside
	}
	return "r"
}
