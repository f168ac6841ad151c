package main

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"
)

// The reference stall of issue 4: a sibling view on the same table that
// must stay right, and a self-join on one key whose output is rows².
const (
	createTable   = `CREATE TABLE t (k int, v int)`
	createSibling = `CREATE MATERIALIZED VIEW sibling AS SELECT count(*) AS n, sum(v) AS s FROM t`
	createAmp     = `CREATE MATERIALIZED VIEW amp AS SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k`
	// With -feed nexmark, amp joins an endless, unpaced bid source to t:
	// once t holds its rows, every bid joins all of them, and the chunks
	// queued ahead of a barrier hold minutes of work. amp is created in
	// the background: its source never ends, so it never catches up.
	createBid = `CREATE SOURCE bid (auction BIGINT, price BIGINT) WITH (connector = 'nexmark', ` +
		`nexmark.table.type = 'Bid', nexmark.split.num = '2', nexmark.min.event.gap.in.ns = '0')`
	createSourceAmp = `CREATE MATERIALIZED VIEW amp AS SELECT b.auction AS x, t.v AS y ` +
		`FROM (SELECT 1 AS k, auction FROM bid) b JOIN t ON b.k = t.k`
	insertRows   = `INSERT INTO t SELECT 1, g FROM generate_series(1, %d) AS g`
	dropAmp      = `DROP MATERIALIZED VIEW amp`
	dropGraceful = `DROP MATERIALIZED VIEW amp GRACEFUL`
	pollEvery    = 5 * time.Millisecond
	siblingEvery = 20 * time.Millisecond // a query costs CPU; poll it less often
)

// stallBench holds the engine, the user's connection and the config.
type stallBench struct {
	cfg  stallConfig
	in   *instance
	conn *pgx.Conn
	log  io.Writer
}

func newStallBench(ctx context.Context, cfg stallConfig, in *instance, log io.Writer) (*stallBench, error) {
	conn, err := in.connect(ctx)
	if err != nil {
		return nil, err
	}
	b := &stallBench{cfg: cfg, in: in, conn: conn, log: log}
	setup := []string{createTable, createSibling}
	if cfg.feed == "nexmark" {
		setup = append(setup, createBid)
	}
	for _, q := range setup {
		if err := b.exec(ctx, q); err != nil {
			b.close()
			return nil, err
		}
	}
	return b, nil
}

func (b *stallBench) close() { _ = b.conn.Close(context.Background()) }

func (b *stallBench) exec(ctx context.Context, q string) error {
	if _, err := b.conn.Exec(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// baseline is the process before a round's job exists: t empty, sibling
// at n = 0, CPU idle.
type baseline struct {
	goroutines int
	heap       uint64
}

// quiesce empties t and waits until sibling says so and the CPU is idle,
// then takes the baseline.
func (b *stallBench) quiesce(ctx context.Context) (baseline, error) {
	if err := b.exec(ctx, "DELETE FROM t"); err != nil {
		return baseline{}, err
	}
	if w, err := b.waitSibling(ctx, 0, time.Now()); err != nil || !w.reached {
		return baseline{}, fmt.Errorf("sibling not back to n = 0 within %s (%w)", b.cfg.settleCap, err)
	}
	if _, err := b.waitIdle(ctx, time.Now()); err != nil {
		return baseline{}, err
	}
	return baseline{heap: heapAfterGC(), goroutines: runtime.NumGoroutine()}, nil
}

// stalled is the moment a round's barrier is stuck.
type stalled struct {
	base       baseline
	barrierAge time.Duration // oldest in-flight barrier just before DROP
	committed  uint64
	ping       time.Duration // SELECT 1 round trip during the stall
}

// stall creates amp, writes the rows and waits until a barrier is stuck.
func (b *stallBench) stall(ctx context.Context) (stalled, error) {
	base, err := b.quiesce(ctx)
	if err != nil {
		return stalled{}, err
	}
	if err := b.createAmp(ctx); err != nil {
		return stalled{}, err
	}
	if err := b.exec(ctx, fmt.Sprintf(insertRows, b.cfg.rows)); err != nil {
		return stalled{}, err
	}
	if err := b.waitStalled(ctx); err != nil {
		return stalled{}, err
	}
	// A trivial query's round trip under the same load tells how much of
	// a DROP's latency is only the client waiting for a core.
	t0 := time.Now()
	if err := b.exec(ctx, "SELECT 1"); err != nil {
		return stalled{}, err
	}
	ping := time.Since(t0)
	st, err := b.in.barrierStatus(ctx)
	if err != nil {
		return stalled{}, err
	}
	return stalled{base: base, ping: ping, barrierAge: st.Barrier.OldestInFlightAge, committed: st.Barrier.Committed}, nil
}

// createAmp creates the amplifying view of the configured feed.
func (b *stallBench) createAmp(ctx context.Context) error {
	if b.cfg.feed != "nexmark" {
		return b.exec(ctx, createAmp)
	}
	for _, q := range []string{"SET background_ddl = true", createSourceAmp, "SET background_ddl = false"} {
		if err := b.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// waitStalled polls the coordinator until the oldest barrier in flight
// is older than the stall threshold.
func (b *stallBench) waitStalled(ctx context.Context) error {
	deadline := time.Now().Add(b.cfg.stallWait)
	for time.Now().Before(deadline) {
		st, err := b.in.barrierStatus(ctx)
		if err != nil {
			return err
		}
		if st.Barrier.OldestInFlightAge >= b.cfg.stallThreshold() {
			return nil
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
	}
	return fmt.Errorf("no barrier stayed in flight for %s within %s: the join finished too soon, raise -rows",
		b.cfg.stallThreshold(), b.cfg.stallWait)
}

// siblingCurrent reports whether sibling shows n rows summing to 1..n.
func (b *stallBench) siblingCurrent(ctx context.Context, n int) (bool, error) {
	var gotN, gotS *string
	if err := b.conn.QueryRow(ctx, "SELECT n, s FROM sibling").Scan(&gotN, &gotS); err != nil {
		return false, fmt.Errorf("read sibling: %w", err)
	}
	wantS := new(big.Rat).SetInt64(int64(n) * int64(n+1) / 2)
	if n == 0 {
		return gotN != nil && *gotN == "0" && gotS == nil, nil
	}
	if gotN == nil || gotS == nil || *gotN != fmt.Sprint(n) {
		return false, nil
	}
	s, ok := new(big.Rat).SetString(*gotS)
	return ok && s.Cmp(wantS) == 0, nil
}

// waitSibling polls sibling until it is current for n rows; the timing
// is measured from t0.
func (b *stallBench) waitSibling(ctx context.Context, n int, t0 time.Time) (timing, error) {
	for time.Since(t0) < b.cfg.settleCap {
		ok, err := b.siblingCurrent(ctx, n)
		if err != nil || ok {
			return reachedAfter(time.Since(t0)), err
		}
		if err := sleep(ctx, siblingEvery); err != nil {
			return timing{}, err
		}
	}
	return timing{d: b.cfg.settleCap}, nil
}

// waitIdle samples the process's CPU time until its use over the
// trailing window is at or below the idle threshold.
func (b *stallBench) waitIdle(ctx context.Context, t0 time.Time) (timing, error) {
	m := newCPUMeter(b.cfg.idleWindow)
	for time.Since(t0) < b.cfg.settleCap {
		m.add(cpuSample{at: time.Now(), cpu: processCPU()})
		if u, ok := m.usage(); ok && u <= b.cfg.idleCPU {
			return reachedAfter(time.Since(t0)), nil
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return timing{}, err
		}
	}
	return timing{d: b.cfg.settleCap}, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// referenceResult is the same write without amp: how fast sibling is
// current and what the heap holds when nothing amplifies.
type referenceResult struct {
	sibling timing
	heap    uint64
}

func (b *stallBench) referenceRound(ctx context.Context) (referenceResult, error) {
	if _, err := b.quiesce(ctx); err != nil {
		return referenceResult{}, err
	}
	t0 := time.Now()
	if err := b.exec(ctx, fmt.Sprintf(insertRows, b.cfg.rows)); err != nil {
		return referenceResult{}, err
	}
	sib, err := b.waitSibling(ctx, b.cfg.rows, t0)
	if err != nil {
		return referenceResult{}, err
	}
	if _, err := b.waitIdle(ctx, time.Now()); err != nil {
		return referenceResult{}, err
	}
	return referenceResult{sibling: sib, heap: heapAfterGC()}, nil
}
