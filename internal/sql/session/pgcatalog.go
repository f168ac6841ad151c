package session

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/types"
)

// psql (15) sends fixed catalog queries for its \d family (see `psql -E`).
// They are recognised by their distinctive text and answered from the
// catalog; every relation lives in schema public and is owned by root.
//
//	\d, \dt, \dm [pattern]  list query: relkind IN (...), "Owner" column
//	\d name                 lookup by name pattern → oid, then the
//	                        relation's details and its columns by oid
//
// Other psql queries (indexes, policies, publications, …) fall through to
// the empty answer.

func itoa(i int) string { return strconv.Itoa(i) }

var (
	reRelkinds = regexp.MustCompile(`c\.relkind IN \(([^)]*)\)`)
	reNameRe   = regexp.MustCompile(`c\.relname OPERATOR\(pg_catalog\.~\) '\^\((.*?)\)\$'`)
	reOID      = regexp.MustCompile(`(?:c\.oid|a\.attrelid) = '(\d+)'`)
)

// psqlQuery answers the catalog queries psql's \d family sends.
func (s *Session) psqlQuery(sql string) ([]pgwire.Column, []types.Row, bool) {
	switch {
	case strings.Contains(sql, `as "Owner"`) && reRelkinds.MatchString(sql):
		return s.psqlList(sql)
	case strings.HasPrefix(sql, "SELECT c.oid,\n  n.nspname,\n  c.relname"):
		return s.psqlLookup(sql)
	case strings.HasPrefix(sql, "SELECT c.relchecks, c.relkind"):
		return s.psqlRelInfo(sql)
	case strings.HasPrefix(sql, "SELECT a.attname,\n  pg_catalog.format_type(a.atttypid, a.atttypmod)"):
		return s.psqlColumns(sql)
	}
	return nil, nil, false
}

func relkind(k catalog.Kind) string {
	if k == catalog.KindMaterializedView {
		return "m"
	}
	return "r"
}

// matching returns the live relations whose kind letter is in kinds (all
// when empty) and whose name matches the query's name pattern, if any.
func (s *Session) matching(sql, kinds string) []*catalog.Relation {
	var re *regexp.Regexp
	if m := reNameRe.FindStringSubmatch(sql); m != nil {
		re, _ = regexp.Compile("^(" + m[1] + ")$")
	}
	var out []*catalog.Relation
	for _, r := range s.relations("") {
		if kinds != "" && !strings.Contains(kinds, "'"+relkind(r.Kind)+"'") {
			continue
		}
		if re != nil && !re.MatchString(r.Name) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func (s *Session) psqlList(sql string) ([]pgwire.Column, []types.Row, bool) {
	kinds := reRelkinds.FindStringSubmatch(sql)[1]
	var rows []types.Row
	for _, r := range s.matching(sql, kinds) {
		rows = append(rows, types.Row{"public", r.Name, string(r.Kind), s.user})
	}
	return textColumns("Schema", "Name", "Type", "Owner"), rows, true
}

func (s *Session) psqlLookup(sql string) ([]pgwire.Column, []types.Row, bool) {
	var rows []types.Row
	for _, r := range s.matching(sql, "") {
		rows = append(rows, types.Row{itoa(int(r.ID)), "public", r.Name})
	}
	return textColumns("oid", "nspname", "relname"), rows, true
}

func (s *Session) relByOID(sql string) *catalog.Relation {
	m := reOID.FindStringSubmatch(sql)
	if m == nil {
		return nil
	}
	id, _ := strconv.Atoi(m[1])
	r, ok := s.e.Catalog().ByID(uint32(id))
	if !ok {
		return nil
	}
	return r
}

// psqlRelInfo is the relation's header row: psql 15 reads relchecks,
// relkind, relhasindex, relhasrules, relhastriggers, relrowsecurity,
// relforcerowsecurity, relhasoids, relispartition, reloptions,
// tablespace, reloftype, relpersistence, relreplident, amname.
func (s *Session) psqlRelInfo(sql string) ([]pgwire.Column, []types.Row, bool) {
	cols := textColumns("relchecks", "relkind", "relhasindex", "relhasrules", "relhastriggers",
		"relrowsecurity", "relforcerowsecurity", "relhasoids", "relispartition", "reloptions",
		"reltablespace", "reloftype", "relpersistence", "relreplident", "amname")
	r := s.relByOID(sql)
	if r == nil {
		return cols, nil, true
	}
	row := types.Row{"0", relkind(r.Kind), "f", "f", "f", "f", "f", "f", "f", "", "0", "", "p", "d", "heap"}
	return cols, []types.Row{row[:len(cols)]}, true
}

// psqlColumns lists the visible columns: attname, format_type,
// default, attnotnull, attcollation, attidentity, attgenerated (psql 15
// with no verbose flag).
func (s *Session) psqlColumns(sql string) ([]pgwire.Column, []types.Row, bool) {
	cols := textColumns("attname", "format_type", "pg_get_expr", "attnotnull", "attcollation", "attidentity", "attgenerated")
	r := s.relByOID(sql)
	if r == nil {
		return cols, nil, true
	}
	var rows []types.Row
	for i, c := range r.Columns {
		if c.Hidden {
			continue
		}
		notNull := "f"
		for _, k := range r.PK {
			if k == i {
				notNull = "t"
			}
		}
		rows = append(rows, types.Row{c.Name, c.Type.String(), nil, notNull, nil, "", ""})
	}
	return cols, rows, true
}
