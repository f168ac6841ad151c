package session

import (
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sluice-db/sluice/internal/pgcatalog"
)

// Every session's activity is visible to every other through
// pg_stat_activity: what it runs and since when. The Handler keeps the
// registry; a session updates its own entry at the start and end of each
// statement and of each transaction block.

// activity is one session's row of pg_stat_activity.
type activity struct {
	mu           sync.Mutex
	pid          uint32
	user, db     string
	app, client  string
	backendStart time.Time
	state        string // active, idle, idle in transaction, idle in transaction (aborted)
	query        string // the running or last statement
	queryStart   time.Time
	xactStart    time.Time // zero outside a transaction block
	stateChange  time.Time
}

// activities is the Handler's registry.
type activities struct {
	mu   sync.Mutex
	byID map[uint32]*activity
}

func (a *activities) add(act *activity) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byID == nil {
		a.byID = map[uint32]*activity{}
	}
	a.byID[act.pid] = act
}

func (a *activities) remove(pid uint32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.byID, pid)
}

// snapshot returns every entry's row, by pid.
func (a *activities) snapshot() []pgcatalog.Backend {
	a.mu.Lock()
	acts := make([]*activity, 0, len(a.byID))
	for _, act := range a.byID {
		acts = append(acts, act)
	}
	a.mu.Unlock()
	slices.SortFunc(acts, func(x, y *activity) int { return int(x.pid) - int(y.pid) })
	out := make([]pgcatalog.Backend, len(acts))
	for i, act := range acts {
		out[i] = act.backend()
	}
	return out
}

func (act *activity) backend() pgcatalog.Backend {
	act.mu.Lock()
	defer act.mu.Unlock()
	return pgcatalog.Backend{PID: int32(act.pid), User: act.user, Database: act.db, Application: act.app,
		Client: act.client, State: act.state, Query: act.query, BackendStart: act.backendStart,
		XactStart: act.xactStart, QueryStart: act.queryStart, StateChange: act.stateChange}
}

// activityQueryBytes bounds the statement text kept, as Postgres's
// track_activity_query_size does: a 64 MB text would otherwise stay in
// memory until the session's next statement.
const activityQueryBytes = 1024

// begin records that the session started running sql.
func (act *activity) begin(sql string, now time.Time) {
	if len(sql) > activityQueryBytes {
		cut := activityQueryBytes
		for cut > 0 && !utf8.RuneStart(sql[cut]) {
			cut--
		}
		sql = strings.Clone(sql[:cut])
	}
	act.mu.Lock()
	defer act.mu.Unlock()
	act.state, act.query, act.queryStart, act.stateChange = "active", sql, now, now
}

// end records that the session waits for its next statement, in a
// transaction block (inBlock, failed) or not.
func (act *activity) end(inBlock, failed bool, now time.Time) {
	act.mu.Lock()
	defer act.mu.Unlock()
	switch {
	case failed:
		act.state = "idle in transaction (aborted)"
	case inBlock:
		act.state = "idle in transaction"
	default:
		act.state = "idle"
	}
	if !inBlock {
		act.xactStart = time.Time{}
	} else if act.xactStart.IsZero() {
		act.xactStart = act.queryStart
	}
	act.stateChange = now
}
