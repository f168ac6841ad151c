package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream"
)

// The amplification guard. A join that emits a huge number of rows for
// one input row (one hot key in a self-join) holds the barrier behind it
// for minutes; no peer acts on it. A job created with an amplification
// limit (streaming_amplification_limit) has its join actors report the
// first row of each probe that matches more rows than the limit
// (stream.Env.OnAmplification), and the guard acts on the job as
// streaming_amplification_action says: notice (a NOTICE to the session
// that created the job, a log line and a metric), throttle (also a rate
// limit on the job's inputs) or pause (also pauses the job), both
// through the control path, which never waits for the stuck barrier.
//
// The reports go through a bounded channel to one goroutine, so a join
// never waits on the guard; reports beyond its buffer are dropped (the
// next row over the limit reports again). The guard acts at most once per
// job per guardQuiet.

// Amplification actions.
const (
	AmpNotice   = "notice"
	AmpThrottle = "throttle"
	AmpPause    = "pause"
)

// DefaultAmpLimit is streaming_amplification_limit's default: a join row
// matching a million rows is rare in a healthy job and costs seconds.
const DefaultAmpLimit = 1_000_000

// guardThrottle is the rate limit, rows per second into each actor, that
// the throttle action sets.
const guardThrottle = 10

// guardQuiet is the least time between two actions on one job.
const guardQuiet = 10 * time.Second

// Notice is a message for the session that created a job.
type Notice struct{ Message, Detail, Hint string }

// NoticeQueue holds a session's notices until the session writes them to
// its client, between statements; while the session waits for a CREATE,
// they go to its live channel instead, which the session reads as it
// waits. Nothing here blocks: the guard never writes to a client.
type NoticeQueue struct {
	mu      sync.Mutex
	notices []Notice
	live    chan<- Notice
}

func (q *NoticeQueue) push(n Notice) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.live != nil {
		select {
		case q.live <- n:
			return
		default: // the session is slow: it gets it after the CREATE
		}
	}
	if len(q.notices) < 64 {
		q.notices = append(q.notices, n)
	}
}

// SetLive sends the notices to ch as they come (nil: queue them again).
func (q *NoticeQueue) SetLive(ch chan<- Notice) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.live = ch
}

// Drain returns the queued notices and forgets them.
func (q *NoticeQueue) Drain() []Notice {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.notices
	q.notices = nil
	return out
}

type guardReport struct {
	actor   stream.ActorID
	key     string
	matches int64
	// forget, when set, is a dropped job to forget instead (forgetJob):
	// it comes after every report of the job's actors, which are gone.
	forget *forgetJob
}

type forgetJob struct {
	job  uint32
	name string
	done chan struct{}
}

type ampGuard struct {
	reports chan guardReport
	// settles asks the guard to act on every report sent so far first.
	settles chan chan struct{}
	actions *prometheus.CounterVec

	mu    sync.Mutex
	sinks map[uint32]*NoticeQueue // by job: its creating session's
	last  map[uint32]time.Time    // by job: the guard's last action
}

func newAmpGuard() *ampGuard {
	return &ampGuard{reports: make(chan guardReport, 64), settles: make(chan chan struct{}),
		sinks: map[uint32]*NoticeQueue{}, last: map[uint32]time.Time{},
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_amplification_guard_actions_total",
			Help: "Times the amplification guard acted on a job, by the job's relation and the action."}, []string{"name", "action"})}
}

// report is the joins' callback (stream.Env.OnAmplification): it never
// blocks, and says whether the guard took the report (a full buffer
// drops it; the join reports its next row over the limit).
func (g *ampGuard) report(actor stream.ActorID, key string, matches int64) bool {
	select {
	case g.reports <- guardReport{actor: actor, key: key, matches: matches}:
		return true
	default:
		return false
	}
}

// watch sends the notices about job to q.
func (g *ampGuard) watch(job uint32, q *NoticeQueue) {
	if q == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sinks[job] = q
}

// forgetJob has the guard drop what it keeps of a dropped job (its
// notice queue, its last action's time, its actions' counters), after
// every report its exited actors sent, and waits for it.
func (e *Engine) forgetJob(ctx context.Context, job uint32, name string) {
	f := &forgetJob{job: job, name: name, done: make(chan struct{})}
	select {
	case e.guard.reports <- guardReport{forget: f}:
	case <-ctx.Done():
		return
	case <-e.trunc.ctx.Done():
		return
	}
	select {
	case <-f.done:
	case <-ctx.Done():
	case <-e.trunc.ctx.Done():
	}
}

func (g *ampGuard) forget(f *forgetJob) {
	g.mu.Lock()
	delete(g.sinks, f.job)
	delete(g.last, f.job)
	g.mu.Unlock()
	g.actions.DeletePartialMatch(prometheus.Labels{"name": f.name})
	close(f.done)
}

// ForgetNotices stops sending notices to q (its session ended).
func (e *Engine) ForgetNotices(q *NoticeQueue) {
	g := e.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	for job, s := range g.sinks {
		if s == q {
			delete(g.sinks, job)
		}
	}
}

// runGuard acts on the joins' reports until ctx ends.
func (e *Engine) runGuard(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-e.guard.reports:
			e.guardAct(ctx, r)
		case done := <-e.guard.settles:
			for settled := false; !settled; {
				select {
				case r := <-e.guard.reports:
					e.guardAct(ctx, r)
				default:
					settled = true
				}
			}
			close(done)
		}
	}
}

// settleGuard returns once the guard has acted on every report its joins
// sent before the call: a foreground CREATE that tripped the guard during
// its backfill then has the notice before it returns.
func (e *Engine) settleGuard(ctx context.Context) {
	done := make(chan struct{})
	select {
	case e.guard.settles <- done:
	case <-ctx.Done():
		return
	case <-e.trunc.ctx.Done(): // the engine is closing: no guard
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-e.trunc.ctx.Done():
	}
}

func (e *Engine) guardAct(ctx context.Context, r guardReport) {
	if r.forget != nil {
		e.guard.forget(r.forget)
		return
	}
	job, ok := e.node.JobOf(r.actor)
	if !ok {
		return
	}
	rel, ok := e.catalog.ByID(job)
	if !ok || rel.State == catalog.StateDropping || rel.Job.Control.AmpLimit <= 0 || !e.guard.due(job) {
		return
	}
	jc := rel.Job.Control
	action := jc.AmpAction
	if action == "" {
		action = AmpNotice
	}
	e.log.Warn("amplification limit exceeded", "job", rel.Name, "key", r.key, "matches", r.matches,
		"limit", jc.AmpLimit, "action", action)
	e.guard.actions.WithLabelValues(rel.Name, action).Inc()
	kind := strings.ToUpper(string(rel.Kind))
	n := Notice{
		Message: fmt.Sprintf("a join in %s matched %d rows for one input row of key %s, over streaming_amplification_limit %d",
			rel.Name, r.matches, r.key, jc.AmpLimit),
		Hint: fmt.Sprintf("ALTER %s %s PAUSE, or DROP it; sluice_join_heavy_key_matched_rows on /metrics shows its heavy keys.", kind, rel.Name),
	}
	var err error
	switch action {
	case AmpThrottle:
		limit := int64(guardThrottle)
		if err = e.SetRateLimit(ctx, rel.Name, &limit); err == nil {
			n.Detail = fmt.Sprintf("The guard limited %s's inputs to %d rows per second.", rel.Name, guardThrottle)
		}
	case AmpPause:
		if err = e.SetPaused(ctx, rel.Name, true); err == nil {
			n.Detail = fmt.Sprintf("The guard paused %s; ALTER %s %s RESUME continues it.", rel.Name, kind, rel.Name)
		}
	}
	if err != nil {
		e.log.Error("amplification guard", "job", rel.Name, "action", action, "err", err)
	}
	if err == nil && action != AmpNotice && rel.State == catalog.StateCreating {
		// A foreground CREATE would wait for a backfill the guard just
		// paused or slowed: it returns, and the job goes on in the
		// background (SHOW JOBS).
		e.creates.release(job)
		n.Detail += " Its CREATE returns; the job goes on being created in the background (SHOW JOBS)."
	}
	e.guard.notify(job, n)
}

// due reports whether the guard may act on job now, and notes it did.
func (g *ampGuard) due(job uint32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.last[job]; ok && time.Since(t) < guardQuiet {
		return false
	}
	g.last[job] = time.Now()
	return true
}

func (g *ampGuard) notify(job uint32, n Notice) {
	g.mu.Lock()
	q := g.sinks[job]
	g.mu.Unlock()
	if q != nil {
		q.push(n)
	}
}

// ampSettingsOf records a CREATE's amplification limit and action in
// rel's job.
func ampSettingsOf(rel *catalog.Relation, limit int64, action string) error {
	if err := checkAmpSettings(limit, action); err != nil {
		return err
	}
	rel.Job.Control.AmpLimit, rel.Job.Control.AmpAction = limit, action
	return nil
}

// checkAmpSettings refuses a negative limit and an unknown action.
func checkAmpSettings(limit int64, action string) error {
	if limit < 0 {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "amplification limit must not be negative: %d", limit)
	}
	if action != "" && !slices.Contains([]string{AmpNotice, AmpThrottle, AmpPause}, action) {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "amplification action must be notice, throttle or pause, not %q", action)
	}
	return nil
}
