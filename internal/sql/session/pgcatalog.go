package session

import (
	"context"
	"sync"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgcatalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Drivers, GUI tools and psql's \d family read pg_catalog and
// information_schema and call catalog functions; the planner binds those
// like any relation and function (package pgcatalog), and the session
// gives a batch query what they are made of: sysView is the catalog as
// this session sees it, the rows of every system relation a query reads
// (SystemRows), and the session functions (pgcatalog.Funcs). Every
// relation lives in schema public.

// sysView is one session's view of the catalog for one statement.
type sysView struct {
	s *Session
	// mu guards the session's variables, which set_config may change
	// while the query runs.
	mu sync.Mutex
	// rels is the statement's one read of the catalog's relations.
	rels func() []*catalog.Relation
}

func (s *Session) sysView() *sysView {
	return &sysView{s: s, rels: sync.OnceValue(func() []*catalog.Relation { return s.relations("") })}
}

// SystemRows implements batch.SystemRows.
func (v *sysView) SystemRows(ctx context.Context, schema, relation string) ([]types.Row, error) {
	if schema == engine.SystemSchema {
		return v.s.e.SystemRows(ctx, relation)
	}
	r, ok := pgcatalog.Lookup(schema, relation)
	if !ok {
		r, ok = pgcatalog.FunctionRelation(relation)
	}
	if !ok {
		return nil, sqlerr.Errorf(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, relation)
	}
	return pgcatalog.Rows(r, v), nil
}

func (v *sysView) Relations() []*catalog.Relation { return v.rels() }
func (v *sysView) Users() []catalog.User          { return v.s.e.Catalog().Users() }
func (v *sysView) Database() string               { return v.s.db }
func (v *sysView) User() string                   { return v.s.user }
func (v *sysView) ServerVersion() string          { return v.s.h.cfg.ServerVersion }
func (v *sysView) BackendPID() int32              { return int32(v.s.pid) }
func (v *sysView) StartTime() time.Time           { return v.s.h.started }
func (v *sysView) Connectors() []string           { return connector.Names() }
func (v *sysView) Backends() []pgcatalog.Backend  { return v.s.h.acts.snapshot() }

func (v *sysView) Settings() []pgcatalog.Setting {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []pgcatalog.Setting
	for _, s := range v.s.vars.all() {
		out = append(out, pgcatalog.Setting{Name: s[0], Value: s[1], Description: s[2]})
	}
	return out
}

func (v *sysView) Setting(name string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, val, err := v.s.vars.get(name)
	return val, err == nil
}

// SetSetting is set_config. A setting Sluice does not have (bytea_output,
// which drivers set on connect) is accepted and has no effect.
func (v *sysView) SetSetting(name, value string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	err := v.s.vars.set(name, value)
	if sqlerr.CodeOf(err) == sqlerr.UndefinedObject {
		return nil
	}
	return err
}

func (v *sysView) Signal(pid int32, terminate bool) bool {
	fn := "pg_cancel_backend"
	if terminate {
		fn = "pg_terminate_backend"
	}
	return v.s.signalBackend(fn, uint32(pid))
}

// Allows reports whether user holds priv on rel: superusers and the
// owner hold everything.
func (v *sysView) Allows(user string, rel *catalog.Relation, priv string) bool {
	u, ok := v.s.e.Catalog().User(user)
	if !ok && user == v.s.user {
		return v.s.isSuperuser()
	}
	return (ok && u.Superuser) || rel.Allows(user, priv)
}

// SluiceCatalog lists sluice_catalog's relations for pg_class.
func (v *sysView) SluiceCatalog() []*pgcatalog.Relation {
	var out []*pgcatalog.Relation
	for _, r := range engine.SystemRelations() {
		out = append(out, pgcatalog.NewRelation(engine.SystemSchema, r.Name, r.Columns))
	}
	return out
}
