package session

import (
	"context"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Users: CREATE USER/ROLE … [WITH] [PASSWORD 'p'] [SUPERUSER | NOSUPERUSER],
// ALTER USER/ROLE … (the same options), DROP USER/ROLE [IF EXISTS] …. The
// catalog keeps each user with its password's SCRAM verifier, never the
// password; the server lets a user log in with it while passwords are
// required. Only superusers create, change or drop users (a user may
// change its own password); root is built in and cannot be changed here.
// Privileges on relations (GRANT, REVOKE, owners) are not enforced yet.

// isSuperuser reports whether the session's user is a superuser: root, a
// user created SUPERUSER, or (trusting every client, as without
// --password) a name the catalog does not know.
func (s *Session) isSuperuser() bool {
	u, ok := s.e.Catalog().User(s.user)
	return !ok || u.Superuser
}

// requireSuperuser refuses what only superusers may do.
func (s *Session) requireSuperuser(what string) error {
	if s.isSuperuser() {
		return nil
	}
	return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied to %s", what)
}

func (s *Session) createRole(ctx context.Context, n *pg_query.CreateRoleStmt, w pgwire.ResultWriter) error {
	if err := s.requireSuperuser("create role"); err != nil {
		return err
	}
	if _, ok := s.e.Catalog().User(n.Role); ok {
		return sqlerr.Errorf(sqlerr.DuplicateObject, "role %q already exists", n.Role)
	}
	return s.putRole(ctx, catalog.User{Name: n.Role}, n.Options, "CREATE ROLE", w)
}

// putRole writes u with opts applied and completes with tag.
func (s *Session) putRole(ctx context.Context, u catalog.User, opts []*pg_query.Node, tag string, w pgwire.ResultWriter) error {
	if err := applyRoleOptions(&u, opts); err != nil {
		return err
	}
	if err := s.e.Catalog().PutUser(ctx, u); err != nil {
		return err
	}
	return w.Complete(tag)
}

func (s *Session) alterRole(ctx context.Context, n *pg_query.AlterRoleStmt, w pgwire.ResultWriter) error {
	name := n.Role.GetRolename()
	u, ok := s.e.Catalog().User(name)
	if !ok {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
	}
	if name == catalog.RootUser {
		return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "role %q is built in: its password is the server's (--password-file)", name)
	}
	own := name == s.user && onlyPassword(n.Options)
	if !own {
		if err := s.requireSuperuser("alter role"); err != nil {
			return err
		}
	}
	return s.putRole(ctx, u, n.Options, "ALTER ROLE", w)
}

func (s *Session) dropRole(ctx context.Context, n *pg_query.DropRoleStmt, w pgwire.ResultWriter) error {
	if err := s.requireSuperuser("drop role"); err != nil {
		return err
	}
	for _, r := range n.Roles {
		name := r.GetRoleSpec().GetRolename()
		switch _, ok := s.e.Catalog().User(name); {
		case name == catalog.RootUser || name == s.user:
			return sqlerr.Errorf(sqlerr.ObjectInUse, "role %q cannot be dropped: it is %s", name,
				map[bool]string{true: "the built-in superuser", false: "the current user"}[name == catalog.RootUser])
		case !ok && n.MissingOk:
			if err := w.Notice(pgwire.Notice{Code: sqlerr.UndefinedObject,
				Message: "role \"" + name + "\" does not exist, skipping"}); err != nil {
				return err
			}
			continue
		case !ok:
			return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
		}
		if owned := s.ownedBy(name); owned != "" {
			e := sqlerr.Errorf(sqlerr.DependentObjectsStillExist, "role %q cannot be dropped because some objects depend on it", name)
			e.Detail = "owner of " + owned
			return e
		}
		if err := s.e.Catalog().DropUser(ctx, name); err != nil {
			return err
		}
	}
	return w.Complete("DROP ROLE")
}

// applyRoleOptions sets the options CREATE/ALTER ROLE gave.
func applyRoleOptions(u *catalog.User, opts []*pg_query.Node) error {
	for _, o := range opts {
		d := o.GetDefElem()
		switch d.Defname {
		case "password":
			if d.Arg == nil { // PASSWORD NULL
				u.Secret = ""
				continue
			}
			secret, err := pgwire.SCRAMSecret(d.Arg.GetString_().GetSval())
			if err != nil {
				return err
			}
			u.Secret = secret
		case "superuser":
			u.Superuser = d.Arg.GetBoolean().GetBoolval()
		case "canlogin", "inherit", "createdb", "createrole", "connectionlimit", "validUntil":
			// Every user can log in and nothing else is distinguished yet.
		default:
			return sqlerr.Errorf(sqlerr.FeatureNotSupported, "role option %s is not supported", strings.ToUpper(d.Defname))
		}
	}
	return nil
}

// onlyPassword reports whether opts change nothing but the password.
func onlyPassword(opts []*pg_query.Node) bool {
	for _, o := range opts {
		if o.GetDefElem().Defname != "password" {
			return false
		}
	}
	return true
}

// ownedBy names a relation user owns ("" for none).
func (s *Session) ownedBy(user string) string {
	for _, r := range s.e.Catalog().All() {
		// A relation being dropped is gone for users (the DROP returned
		// before its cleanup ends): DROP VIEW then DROP USER must work.
		if r.Owner == user && r.State != catalog.StateDropping {
			return relKindName(r.Kind) + " " + r.Name
		}
	}
	return ""
}
