package session

import (
	"context"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Privileges: a relation's owner (its creator) and superusers may do
// anything with it; other users need SELECT to read it (also into a new
// view), INSERT, UPDATE or DELETE to change it (COPY is INSERT), granted
// with GRANT … ON … TO user | PUBLIC by the owner or a superuser; only
// the owner or a superuser drops it (42501 otherwise). Each check reads
// the relation's current record, so a REVOKE holds for prepared
// statements too.

// checkPrivileges refuses a planned statement the session's user may not
// run: reads are the relations its plan reads.
func (s *Session) checkPrivileges(res planner.Result, reads []*catalog.Relation) error {
	if s.isSuperuser() {
		return nil
	}
	for _, r := range reads {
		if err := s.mayDo(r, "SELECT"); err != nil {
			return err
		}
	}
	switch r := res.(type) {
	case *planner.Insert:
		return s.mayDo(r.Table, "INSERT")
	case *planner.Update:
		return s.mayDo(r.Table, "UPDATE")
	case *planner.Delete:
		return s.mayDo(r.Table, "DELETE")
	case *planner.Drop:
		for _, name := range r.Names {
			if rel, ok := s.e.Catalog().ByName(name); ok && !rel.OwnedBy(s.user) {
				return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindName(rel.Kind), name)
			}
		}
	}
	return nil
}

// mayDo refuses priv on rel unless the user holds it (now).
func (s *Session) mayDo(rel *catalog.Relation, priv string) error {
	if s.isSuperuser() {
		return nil
	}
	if cur, ok := s.e.Catalog().ByID(rel.ID); ok {
		rel = cur
	}
	if rel.Allows(s.user, priv) {
		return nil
	}
	return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindName(rel.Kind), rel.Name)
}

func relKindName(k catalog.Kind) string {
	if k == catalog.KindMaterializedView || k == catalog.KindSource || k == catalog.KindSink {
		return string(k)
	}
	return "table"
}

// grant runs GRANT or REVOKE of table privileges.
func (s *Session) grant(ctx context.Context, g *pg_query.GrantStmt, w pgwire.ResultWriter) error {
	if g.Objtype != pg_query.ObjectType_OBJECT_TABLE || g.Targtype != pg_query.GrantTargetType_ACL_TARGET_OBJECT {
		return sqlerr.New(sqlerr.FeatureNotSupported, "only GRANT and REVOKE on tables and materialized views are supported")
	}
	privs, err := grantPrivileges(g.Privileges)
	if err != nil {
		return err
	}
	var grantees []string
	for _, n := range g.Grantees {
		rs := n.GetRoleSpec()
		name := rs.GetRolename()
		if rs.GetRoletype() == pg_query.RoleSpecType_ROLESPEC_PUBLIC {
			name = catalog.Public
		} else if _, ok := s.e.Catalog().User(name); !ok {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
		}
		grantees = append(grantees, name)
	}
	for _, o := range g.Objects {
		name := o.GetRangeVar().GetRelname()
		rel, ok := s.e.Catalog().ByName(name)
		if !ok {
			return errNoRelation(name)
		}
		if !s.isSuperuser() && !rel.OwnedBy(s.user) {
			return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindName(rel.Kind), name)
		}
		if _, err := s.e.Catalog().Update(ctx, rel.ID, func(r *catalog.Relation) error {
			for _, to := range grantees {
				r.Grant(to, privs, !g.IsGrant)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if g.IsGrant {
		return w.Complete("GRANT")
	}
	return w.Complete("REVOKE")
}

// grantPrivileges reads a GRANT's privilege list (nil: ALL).
func grantPrivileges(list []*pg_query.Node) ([]string, error) {
	if len(list) == 0 {
		return catalog.Privileges, nil
	}
	var out []string
	for _, n := range list {
		ap := n.GetAccessPriv()
		name := strings.ToUpper(ap.GetPrivName())
		if len(ap.GetCols()) > 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "column privileges are not supported")
		}
		switch name {
		case "SELECT", "INSERT", "UPDATE", "DELETE":
			out = append(out, name)
		case "TRUNCATE", "REFERENCES", "TRIGGER":
			// Sluice has no such operations on relations: nothing to grant.
		default:
			return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "privilege %s is not supported", name)
		}
	}
	return out, nil
}
