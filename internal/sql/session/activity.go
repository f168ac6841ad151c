package session

import (
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sluice-db/sluice/internal/types"
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
func (a *activities) snapshot() [][]any {
	a.mu.Lock()
	acts := make([]*activity, 0, len(a.byID))
	for _, act := range a.byID {
		acts = append(acts, act)
	}
	a.mu.Unlock()
	slices.SortFunc(acts, func(x, y *activity) int { return int(x.pid) - int(y.pid) })
	rows := make([][]any, len(acts))
	for i, act := range acts {
		rows[i] = act.row()
	}
	return rows
}

// pgStatActivityCols are pg_stat_activity's columns (catalogtables.go's
// notation: a suffix gives the type, text otherwise).
const pgStatActivityCols = "datid:i datname pid:i leader_pid:i usesysid:i usename application_name client_addr client_hostname " +
	"client_port:i backend_start xact_start query_start state_change wait_event_type wait_event state backend_xid " +
	"backend_xmin query_id:i query backend_type"

func (act *activity) row() []any {
	act.mu.Lock()
	defer act.mu.Unlock()
	return []any{int64(oidDatabase), act.db, int64(act.pid), nil, int64(oidRoot), act.user, act.app, nilIfEmpty(act.client), nil,
		nil, stamp(act.backendStart), stamp(act.xactStart), stamp(act.queryStart), stamp(act.stateChange), nil, nil,
		act.state, nil, nil, nil, act.query, "client backend"}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// stamp formats t as a timestamptz, NULL when zero.
func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return types.FormatDatum(types.TimestamptzFromTime(t), types.TTimestamptz)
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
