//go:build unix

package engine

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-db/sluice/internal/catalog"
)

// TestAmplificationGuard runs the reference stall, then sets amp's
// amplification limit to 1 000 (its rows match up to 20 000 each), once
// per action. Each time the guard names amp and key 1 in a notice to the
// creating session's queue and counts its action, and throttle and pause
// take effect through the control path, while the barrier stays stuck
// behind amp at the epoch it was stuck at.
func TestAmplificationGuard(t *testing.T) {
	for _, action := range []string{AmpNotice, AmpThrottle, AmpPause} {
		t.Run(action, func(t *testing.T) {
			s := newStall(t)
			reg := prometheus.NewRegistry()
			if err := s.e.RegisterMetrics(reg); err != nil {
				t.Fatal(err)
			}
			s.baseline()
			q := &NoticeQueue{}
			amp := s.ampGuarded(0, "", q)
			s.insert(1, stallRows)
			stuckAt := s.stuck()
			s.timed("SetAmplification", func() error { return s.e.SetAmplification(s.ctx, amp.Name, 1000, action) })
			var notices []Notice
			waitFor(t, "the guard's notice", func() bool {
				notices = append(notices, q.Drain()...)
				return len(notices) > 0
			})
			n := notices[0]
			if !strings.Contains(n.Message, "amp") || !strings.Contains(n.Message, "key 1,") || !strings.Contains(n.Hint, "PAUSE") {
				t.Errorf("notice %+v", n)
			}
			if got := gather(t, reg).sum("sluice_amplification_guard_actions_total", "name=amp", "action="+action); got != 1 {
				t.Errorf("%v guard actions counted, want 1", got)
			}
			cur, _ := s.e.Catalog().ByID(amp.ID)
			jc := cur.Job.Control
			switch action {
			case AmpThrottle:
				if jc.RateLimit == nil || *jc.RateLimit != guardThrottle || !strings.Contains(n.Detail, "limited") {
					t.Errorf("after throttle: %+v, notice %+v", jc, n)
				}
			case AmpPause:
				if !jc.Paused || !strings.Contains(n.Detail, "paused") {
					t.Errorf("after pause: %+v, notice %+v", jc, n)
				}
			default:
				if jc.RateLimit != nil || jc.Paused || n.Detail != "" {
					t.Errorf("notice changed the job: %+v, notice %+v", jc, n)
				}
			}
			if action == AmpNotice {
				s.assertStuckAt(stuckAt) // the guard acted without waiting for it
			} else {
				// Throttled or paused, amp lets the barriers overtake its
				// work: the stall ends by itself, without RECOVER or DROP.
				next := s.status().Barrier.LastEpoch + 2
				waitFor(t, "barriers to commit after the guard's "+action, func() bool { return s.status().Barrier.Committed >= next })
			}
			s.timed("DROP amp", func() error { return s.e.Drop(s.ctx, amp.Name, false) })
			if gather(t, reg).has("sluice_amplification_guard_actions_total", "name=amp") {
				t.Error("the guard's counter of the dropped amp is still served")
			}
			s.e.guard.mu.Lock()
			left := len(s.e.guard.sinks) + len(s.e.guard.last)
			s.e.guard.mu.Unlock()
			if left != 0 {
				t.Errorf("the guard keeps %d entries of dropped jobs", left)
			}
		})
	}
}

// ampGuarded is amp (stall_e2e_test.go), created in the background with
// an amplification limit and action whose notices go to q.
func (s *stall) ampGuarded(limit int64, action string, q *NoticeQueue) *catalog.Relation {
	b := newBuilder(s.ctx, s.e)
	spec := b.view("amp", b.join(innerJoin, b.scan(s.tbl), b.scan(s.tbl), []int{0}, []int{0}),
		[]string{"k1", "v1", "r1", "k2", "v2", "r2"})
	spec.Background, spec.Definition = true, "SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k"
	spec.AmpLimit, spec.AmpAction, spec.Notices = limit, action, q
	rel, err := s.e.CreateMaterializedView(s.ctx, spec)
	if err != nil {
		s.t.Fatal(err)
	}
	return rel
}
