package main

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// roundResult is one stall ended by an immediate DROP. Every timing is
// measured from the moment the DROP was sent.
type roundResult struct {
	barrierAge time.Duration
	ping       time.Duration // SELECT 1 during the stall, before the DROP
	// control is each ALTER's latency during the stall, before the DROP
	// (controlStatements, in order).
	control    [len(controlStatements)]time.Duration
	drop       time.Duration
	goroutines timing // back to the round's baseline count
	cpuIdle    timing
	commit     timing // a barrier commits after the drop
	sibling    timing // n = rows and the right sum
	heapBefore uint64
	heapAfter  uint64
}

func (b *stallBench) immediateRound(ctx context.Context) (roundResult, error) {
	s, err := b.stall(ctx)
	if err != nil {
		return roundResult{}, err
	}
	var control [len(controlStatements)]time.Duration
	for i, q := range controlStatements {
		t0 := time.Now()
		if err := b.exec(ctx, q); err != nil {
			return roundResult{}, err
		}
		control[i] = time.Since(t0)
	}
	t0 := time.Now()
	if err := b.exec(ctx, dropAmp); err != nil {
		return roundResult{}, err
	}
	r := roundResult{barrierAge: s.barrierAge, ping: s.ping, control: control, drop: time.Since(t0), heapBefore: s.base.heap}
	if err := b.settle(ctx, t0, s, &r); err != nil {
		return roundResult{}, err
	}
	r.heapAfter = heapAfterGC()
	return r, nil
}

// controlStatements are sent to the stuck amp before its DROP: each
// travels the control channel and must not wait for the barrier. amp is
// left running as it was (RESUME, then the limit lifted).
var controlStatements = [...]string{
	"ALTER MATERIALIZED VIEW amp SET RATE_LIMIT = 10",
	"ALTER MATERIALIZED VIEW amp PAUSE",
	"ALTER MATERIALIZED VIEW amp RESUME",
	"ALTER MATERIALIZED VIEW amp SET RATE_LIMIT = DEFAULT",
}

// settle watches goroutines, CPU, commits and sibling in one loop (no
// extra goroutines to disturb the count) until all four are back or
// settleCap has passed since t0.
func (b *stallBench) settle(ctx context.Context, t0 time.Time, s stalled, r *roundResult) error {
	m := newCPUMeter(b.cfg.idleWindow)
	nextSibling := time.Now()
	for time.Since(t0) < b.cfg.settleCap {
		now := time.Now()
		since := now.Sub(t0)
		if !r.goroutines.reached && runtime.NumGoroutine() <= s.base.goroutines {
			r.goroutines = reachedAfter(since)
		}
		if m.add(cpuSample{at: now, cpu: processCPU()}); !r.cpuIdle.reached {
			if u, ok := m.usage(); ok && u <= b.cfg.idleCPU {
				r.cpuIdle = reachedAfter(since)
			}
		}
		if err := b.checkCommit(ctx, s.committed, since, &r.commit); err != nil {
			return err
		}
		if !r.sibling.reached && !now.Before(nextSibling) {
			ok, err := b.siblingCurrent(ctx, b.cfg.rows)
			if err != nil {
				return err
			}
			if ok {
				r.sibling = reachedAfter(time.Since(t0))
			}
			nextSibling = now.Add(siblingEvery)
		}
		if r.goroutines.reached && r.cpuIdle.reached && r.commit.reached && r.sibling.reached {
			return nil
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
	}
	r.goroutines, r.cpuIdle = orCap(r.goroutines, b.cfg.settleCap), orCap(r.cpuIdle, b.cfg.settleCap)
	r.commit, r.sibling = orCap(r.commit, b.cfg.settleCap), orCap(r.sibling, b.cfg.settleCap)
	return nil
}

func (b *stallBench) checkCommit(ctx context.Context, committedAtDrop uint64, since time.Duration, t *timing) error {
	if t.reached {
		return nil
	}
	st, err := b.in.barrierStatus(ctx)
	if err != nil {
		return err
	}
	if st.Barrier.Committed > committedAtDrop {
		*t = reachedAfter(since)
	}
	return nil
}

func orCap(t timing, c time.Duration) timing {
	if t.reached {
		return t
	}
	return timing{d: c}
}

// gracefulResult is one stall ended by DROP … GRACEFUL, or the reason
// there is no such DROP yet.
type gracefulResult struct {
	barrierAge  time.Duration
	drop        timing // not reached: the cap
	unavailable string
}

// gracefulRound sends the graceful DROP on a connection of its own: at
// the cap the client gives up, and pgx closes a connection whose context
// ends mid-statement. Whatever is left is dropped at once afterwards.
func (b *stallBench) gracefulRound(ctx context.Context) (gracefulResult, error) {
	s, err := b.stall(ctx)
	if err != nil {
		return gracefulResult{}, err
	}
	g := gracefulResult{barrierAge: s.barrierAge}
	conn, err := b.in.connect(ctx)
	if err != nil {
		return g, err
	}
	gctx, cancel := context.WithTimeout(ctx, b.cfg.gracefulCap)
	t0 := time.Now()
	_, err = conn.Exec(gctx, dropGraceful)
	elapsed := time.Since(t0)
	capped := gctx.Err() != nil && ctx.Err() == nil
	cancel()
	_ = conn.Close(context.Background())
	switch {
	case err == nil:
		g.drop = reachedAfter(elapsed)
	case capped:
		g.drop = timing{d: b.cfg.gracefulCap}
	case ctx.Err() != nil:
		return g, ctx.Err()
	default:
		g.unavailable = err.Error()
	}
	return g, b.cleanUp(ctx, s)
}

// cleanUp drops whatever a graceful round left and lets the process
// settle, so the next round starts from the same state.
func (b *stallBench) cleanUp(ctx context.Context, s stalled) error {
	if err := b.exec(ctx, "DROP MATERIALIZED VIEW IF EXISTS amp"); err != nil {
		return fmt.Errorf("drop amp after the graceful DROP: %w", err)
	}
	var r roundResult
	return b.settle(ctx, time.Now(), s, &r)
}
