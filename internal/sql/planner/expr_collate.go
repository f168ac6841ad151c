package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Sluice compares and sorts text in byte order, which is Postgres's "C"
// collation (and "POSIX", its other name). expr COLLATE "C", or
// COLLATE "default" (the database's collation, which for Sluice is C), is
// therefore the expression unchanged; psql's pattern queries send
// COLLATE pg_catalog.default. Any other collation would order text in a
// way Sluice does not, so it is refused rather than ignored.

// byteOrderCollations are the collations text already compares in.
// Names are case-sensitive, as in Postgres: COLLATE c is not "C".
var byteOrderCollations = map[string]bool{"C": true, "POSIX": true, "default": true}

// collate binds expr COLLATE name.
func (b *binder) collate(c *pg_query.CollateClause) (typed, error) {
	x, err := b.bind(c.Arg)
	if err != nil {
		return typed{}, err
	}
	if x.t.ID == types.Unknown {
		if x, err = b.coerce(x, types.TVarchar, c.Location); err != nil {
			return typed{}, err
		}
	}
	if t := x.t; t.ID != types.Varchar && !(t.IsArray() && t.ElemType().ID == types.Varchar) {
		return typed{}, errAt(b.q.st, sqlerr.DatatypeMismatch, c.Location, "collations are not supported by type %s", t)
	}
	name, schema := collationName(c.Collname)
	if !byteOrderCollations[name] || (schema != "" && schema != "pg_catalog") {
		return typed{}, errAt(b.q.st, sqlerr.FeatureNotSupported, c.Location,
			`collation %q is not supported: Sluice compares text in byte order, as COLLATE "C" does`, qualified(schema, name))
	}
	return x, nil
}

// collationName splits a collation's possibly qualified name.
func collationName(names []*pg_query.Node) (name, schema string) {
	if len(names) == 0 {
		return "", ""
	}
	name = names[len(names)-1].GetString_().GetSval()
	if len(names) > 1 {
		schema = names[len(names)-2].GetString_().GetSval()
	}
	return name, schema
}

func qualified(schema, name string) string {
	if schema == "" {
		return name
	}
	return schema + "." + name
}
