package session

import (
	"context"
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/task"
)

// The amplification guard's session side (engine/guard.go): a new job
// takes streaming_amplification_limit and streaming_amplification_action
// from the session that creates it, and the guard's notices about it come
// back to that session. While a foreground CREATE waits for its backfill
// they are written at once; otherwise they wait for the session's next
// statement (pgwire sends nothing between statements).

// ampSettings gives a new job the session's amplification guard.
func (s *Session) ampSettings(spec *engine.ViewSpec) error {
	_, limit, err := s.vars.get("streaming_amplification_limit")
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(limit, 10, 64)
	if err != nil {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid streaming_amplification_limit %q", limit)
	}
	_, action, err := s.vars.get("streaming_amplification_action")
	spec.AmpLimit, spec.AmpAction, spec.Notices = n, action, s.notices
	return err
}

// withLiveNotices runs create while writing the guard's notices to w as
// they come. create runs in a goroutine of its own, and this one, the
// session's, writes the notices: the guard never touches a connection.
func (s *Session) withLiveNotices(ctx context.Context, w pgwire.ResultWriter, create func(context.Context) error) error {
	live := make(chan engine.Notice, 16)
	s.notices.SetLive(live)
	g, gctx := task.NewGroup(ctx)
	done := make(chan error, 1)
	g.Go(gctx, "create", func(ctx context.Context) error {
		done <- create(ctx)
		return nil
	})
	var err error
	for waiting := true; waiting; {
		select {
		case n := <-live:
			_ = w.Notice(pgNotice(n))
		case err = <-done:
			waiting = false
		}
	}
	s.notices.SetLive(nil)
	_ = g.Wait()
	for {
		select {
		case n := <-live:
			_ = w.Notice(pgNotice(n))
		default:
			return err
		}
	}
}

// writeNotices writes the notices the guard queued since the last
// statement.
func (s *Session) writeNotices(w pgwire.ResultWriter) error {
	for _, n := range s.notices.Drain() {
		if err := w.Notice(pgNotice(n)); err != nil {
			return err
		}
	}
	return nil
}

func pgNotice(n engine.Notice) pgwire.Notice {
	return pgwire.Notice{Severity: "WARNING", Code: sqlerr.Warning, Message: n.Message, Detail: n.Detail, Hint: n.Hint}
}

// checkAmpLimit validates streaming_amplification_limit: rows ≥ 0 (0:
// no guard).
func checkAmpLimit(v string) (string, error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "default") {
		return strconv.Itoa(engine.DefaultAmpLimit), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return "", sqlerr.Errorf(sqlerr.InvalidParameterValue,
			"invalid value for streaming_amplification_limit: %q (rows one input row may produce in a join; 0 turns the guard off)", v)
	}
	return strconv.FormatInt(n, 10), nil
}

// checkAmpAction validates streaming_amplification_action.
func checkAmpAction(v string) (string, error) {
	switch a := strings.ToLower(strings.TrimSpace(v)); a {
	case engine.AmpNotice, engine.AmpThrottle, engine.AmpPause:
		return a, nil
	}
	return "", sqlerr.Errorf(sqlerr.InvalidParameterValue,
		"invalid value for streaming_amplification_action: %q (notice, throttle or pause)", v)
}
