package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
)

// side is one of the two systems under test.
type side struct {
	name   string // "sluice" or "postgres"
	sluice bool
	conn   *pgx.Conn // setup, checks and the sequential figures
	cpu    func() (time.Duration, error)
	// connect opens a client connection with pgx's default (extended,
	// prepared) protocol.
	connect func(ctx context.Context) (*pgx.Conn, error)
}

// ingestBench holds both systems and the generated data.
type ingestBench struct {
	cfg     ingestConfig
	log     io.Writer
	data    *ingestData
	sl, pg  *side
	srv     *serverProcess
	notIdle []string // figures measured before a server went idle
}

func (b *ingestBench) open(ctx context.Context, srv *serverProcess, pg *postgres) error {
	b.srv = srv
	slConn, err := connectSimple(ctx, srv.dsn)
	if err != nil {
		return err
	}
	b.sl = &side{name: "sluice", sluice: true, conn: slConn,
		cpu:     func() (time.Duration, error) { return treeCPU(srv.pid()) },
		connect: func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, srv.dsn) }}
	pgConn, err := pgx.Connect(ctx, pg.dsn())
	if err != nil {
		_ = slConn.Close(context.Background())
		return err
	}
	b.pg = &side{name: "postgres", conn: pgConn, cpu: pg.cpu,
		connect: func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, pg.dsn()) }}
	return nil
}

func (b *ingestBench) close() {
	for _, s := range []*side{b.sl, b.pg} {
		if s != nil {
			_ = s.conn.Close(context.Background())
		}
	}
}

func (b *ingestBench) sides() []*side { return []*side{b.sl, b.pg} }

// measured is one system's cost of one figure: its server's CPU time and
// the wall-clock time. self is this process's CPU over the same span: the
// benchmark client's share, which neither server's figure includes.
type measured struct {
	cpu, wall, self time.Duration
}

// measure runs f between two samples of s's CPU time.
func (s *side) measure(f func() error) (measured, error) {
	c0, err := s.cpu()
	if err != nil {
		return measured{}, err
	}
	self0, t0 := processCPU(), time.Now()
	if err := f(); err != nil {
		return measured{}, err
	}
	wall := time.Since(t0)
	c1, err := s.cpu()
	if err != nil {
		return measured{}, err
	}
	return measured{cpu: c1 - c0, wall: wall, self: processCPU() - self0}, nil
}

func (s *side) exec(ctx context.Context, q string, args ...any) error {
	if _, err := s.conn.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, q, err)
	}
	return nil
}

func (s *side) count(ctx context.Context, q string) (int64, error) {
	var n int64
	if err := s.conn.QueryRow(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %s: %w", s.name, q, err)
	}
	return n, nil
}

// copyIn loads COPY text into table and checks the row count.
func (s *side) copyIn(ctx context.Context, table string, data []byte, rows int) error {
	tag, err := s.conn.PgConn().CopyFrom(ctx, bytes.NewReader(data), "COPY "+table+" FROM STDIN")
	if err != nil {
		return fmt.Errorf("%s: COPY %s: %w", s.name, table, err)
	}
	if tag.RowsAffected() != int64(rows) {
		return fmt.Errorf("%s: COPY %s wrote %d rows, want %d", s.name, table, tag.RowsAffected(), rows)
	}
	return nil
}

// quiesce makes both servers durable and idle before a measurement:
// Sluice FLUSHes (every view current), Postgres CHECKPOINTs (dirty pages
// of earlier figures written), then each server's CPU use must fall to
// -idle-cpu over -idle-window, so neither measures the other's leftovers.
func (b *ingestBench) quiesce(ctx context.Context, figure string) error {
	if err := b.sl.exec(ctx, "FLUSH"); err != nil {
		return err
	}
	if err := b.pg.exec(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	t0 := time.Now()
	for _, s := range b.sides() {
		ok, err := b.waitIdle(ctx, s, t0)
		if err != nil {
			return err
		}
		if !ok {
			b.notIdle = append(b.notIdle, fmt.Sprintf("%s (%s still busy after %s)", figure, s.name, b.cfg.settleCap))
			b.progress("warning: %s not idle after %s before %s", s.name, b.cfg.settleCap, figure)
		}
	}
	return nil
}

// deferredWork measures what a system does after a figure for the rows
// the figure loaded, until it is idle: Sluice's Pebble flushes and
// compactions, Postgres's CHECKPOINT writing the figure's dirty pages.
// Neither is in the figure's row (both systems defer it the same way),
// but a change that moves work from one side of the figure's end to the
// other shows here.
func (b *ingestBench) deferredWork(ctx context.Context, s *side) (measured, error) {
	return s.measure(func() error {
		if !s.sluice {
			if err := s.exec(ctx, "CHECKPOINT"); err != nil {
				return err
			}
		}
		_, err := b.waitIdle(ctx, s, time.Now())
		return err
	})
}

func (b *ingestBench) waitIdle(ctx context.Context, s *side, t0 time.Time) (bool, error) {
	m := newCPUMeter(b.cfg.idleWindow)
	for time.Since(t0) < b.cfg.settleCap {
		c, err := s.cpu()
		if err != nil {
			return false, err
		}
		m.add(cpuSample{at: time.Now(), cpu: c})
		if u, ok := m.usage(); ok && u <= b.cfg.idleCPU {
			return true, nil
		}
		if err := sleep(ctx, 25*time.Millisecond); err != nil {
			return false, err
		}
	}
	return false, nil
}

// figureResult is one row of the table: both systems' cost of a figure.
type figureResult struct {
	key, label string
	sl, pg     measured
	flush      measured // Sluice's FLUSH after a COPY without a view
	// slAfter, pgAfter: the work each system deferred past the figure
	// (deferredWork), not in the row.
	slAfter, pgAfter measured
	notes            []string
	peakRSS          uint64         // this process's VmHWM once the figure is done
	reps             []figureResult // every repetition, the median pair among them (ingest_repeat.go)
}

// loadSpec is a COPY figure: a fresh table, maybe a view over it.
type loadSpec struct {
	key, label string
	table      string
	view       string // Sluice's materialized view (%s: the table), or none
	pgQuery    string // what Postgres runs once after the COPY instead
	groups     bool   // the view has one row per auction, not per bid
}

const bidColumns = "(auction bigint, bidder bigint, price bigint, channel varchar, url varchar, date_time timestamp, extra varchar)"

func loadFigures() []loadSpec {
	groupBy := "SELECT auction, count(*) AS n, max(price) AS mx, sum(price) AS total FROM %s GROUP BY auction"
	return []loadSpec{
		{key: "copy", label: "copy", table: "bid_copy"},
		{key: "copy_passthrough", label: "copy+passthrough view", table: "bid_pass",
			view: "SELECT * FROM %s", pgQuery: "SELECT count(*) FROM (SELECT * FROM %s) s"},
		{key: "copy_groupby", label: "copy+group-by view", table: "bid_agg",
			view: groupBy, pgQuery: groupBy, groups: true},
	}
}

func (b *ingestBench) loadFigure(ctx context.Context, f loadSpec) (figureResult, error) {
	r := figureResult{key: f.key, label: f.label}
	want := int64(b.cfg.rows)
	if f.groups {
		want = int64(b.data.auctions)
	}
	var got [2]int64
	for i, s := range b.sides() {
		if err := s.exec(ctx, "CREATE TABLE "+f.table+" "+bidColumns); err != nil {
			return r, err
		}
		mv := f.table + "_v"
		if s.sluice && f.view != "" {
			if err := s.exec(ctx, "CREATE MATERIALIZED VIEW "+mv+" AS "+fmt.Sprintf(f.view, f.table)); err != nil {
				return r, err
			}
		}
		if err := b.quiesce(ctx, f.label); err != nil {
			return r, err
		}
		b.progress("%s: %s", f.label, s.name)
		m, err := s.measure(func() error {
			if err := s.copyIn(ctx, f.table, b.data.bids, b.cfg.rows); err != nil {
				return err
			}
			switch {
			case f.view == "":
				return nil
			case s.sluice:
				return s.exec(ctx, "FLUSH")
			}
			var err error
			got[i], err = s.queryOnce(ctx, fmt.Sprintf(f.pgQuery, f.table), f.groups)
			return err
		})
		if err != nil {
			return r, err
		}
		if s.sluice && f.view != "" {
			if got[i], err = s.count(ctx, "SELECT count(*) FROM "+mv); err != nil {
				return r, err
			}
		}
		if s.sluice && f.view == "" {
			// The COPY returns once its rows are durable and readable; the
			// table's own state is written after it. That work is the
			// COPY's too, so it is measured (FLUSH waits for it) and shown.
			if r.flush, err = s.measure(func() error { return s.exec(ctx, "FLUSH") }); err != nil {
				return r, err
			}
		}
		after, err := b.deferredWork(ctx, s)
		if err != nil {
			return r, err
		}
		if s.sluice {
			r.sl, r.slAfter = m, after
		} else {
			r.pg, r.pgAfter = m, after
		}
	}
	if f.view != "" {
		if got[0] != want || got[1] != want {
			return r, fmt.Errorf("sluice's view has %d rows, postgres's query returned %d, want %d", got[0], got[1], want)
		}
		what := "rows"
		if f.groups {
			what = "groups"
		}
		r.notes = append(r.notes, fmt.Sprintf("%d %s in both", want, what))
	}
	r.notes = append(r.notes, fmt.Sprintf("rows per cpu-s: sluice %s, postgres %s",
		perSecond(b.cfg.rows, r.sl.cpu), perSecond(b.cfg.rows, r.pg.cpu)))
	r.notes = append(r.notes, fmt.Sprintf("deferred past the figure (not in the row): sluice %.2f s cpu until idle, postgres %.2f s (CHECKPOINT, then until idle)",
		r.slAfter.cpu.Seconds(), r.pgAfter.cpu.Seconds()))
	if f.view == "" {
		r.notes = append(r.notes, fmt.Sprintf("then sluice's FLUSH (the table's state written): %.2f s cpu; copy+FLUSH %.2fx postgres",
			r.flush.cpu.Seconds(), (r.sl.cpu+r.flush.cpu).Seconds()/max(r.pg.cpu.Seconds(), 1e-9)))
	}
	return r, nil
}

// queryOnce runs q and reads every row: a count(*) returns its value,
// otherwise the number of rows fetched.
func (s *side) queryOnce(ctx context.Context, q string, countRows bool) (int64, error) {
	if !countRows {
		return s.count(ctx, q)
	}
	rows, err := s.conn.Query(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.name, err)
	}
	var n int64
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("%s: %s: %w", s.name, q, err)
	}
	return n, nil
}

func perSecond(n int, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	v := float64(n) / d.Seconds()
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

var errShortRun = errors.New("no statement completed")
