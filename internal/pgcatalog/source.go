package pgcatalog

import (
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
)

// Source is the catalog as one session sees it: what the rows and the
// functions are made of. The session implements it.
type Source interface {
	// Relations lists the relations clients may see (tables, views,
	// sources; not sinks, not relations being dropped), by id.
	Relations() []*catalog.Relation
	// Users lists the catalog's users, by name.
	Users() []catalog.User
	Database() string
	User() string
	ServerVersion() string
	BackendPID() int32
	StartTime() time.Time
	// Settings lists the session's variables and the server's read-only
	// settings, by name.
	Settings() []Setting
	// Setting reads one; ok is false for an unknown name.
	Setting(name string) (value string, ok bool)
	// SetSetting is set_config.
	SetSetting(name, value string) error
	// Backends lists the server's sessions (pg_stat_activity).
	Backends() []Backend
	// Signal cancels (or terminates) the backend pid.
	Signal(pid int32, terminate bool) bool
	// Allows reports whether user may use priv (SELECT, INSERT, …) on rel.
	Allows(user string, rel *catalog.Relation, priv string) bool
	// SluiceCatalog lists the relations of sluice_catalog.
	SluiceCatalog() []*Relation
	// Connectors names the source connectors (pg_foreign_server).
	Connectors() []string
}

// Setting is one row of pg_settings.
type Setting struct{ Name, Value, Description string }

// Backend is one row of pg_stat_activity.
type Backend struct {
	PID                                               int32
	User, Database, Application, Client, State, Query string
	BackendStart, XactStart, QueryStart, StateChange  time.Time
}
