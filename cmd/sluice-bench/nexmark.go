package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/nexmark"
)

// nexmark runs Nexmark queries as materialized views fed by the nexmark
// connector, each in a fresh engine of its own (a serve child, so its CPU
// time and memory are its own), and the generator alone, as a job that
// keeps nothing, for the ceiling:
//
//	sluice-bench nexmark -query q0,q1 -events 1000000
//	sluice-bench nexmark -all
//	sluice-bench nexmark -query q0 -into blackhole
//
// With -into blackhole each query feeds a blackhole sink instead of a
// view, as RisingWave's and Flink's published figures are measured; a
// view stores every row its query emits, which a sink does not.
//
// A query's time runs from CREATE MATERIALIZED VIEW (or SINK) until every source
// has read its events and the epoch holding the last of them has
// committed (serve -watch-sources).

type nexmarkConfig struct {
	engine  engineConfig
	queries []nexmarkQuery
	events  int64
	splits  int
	// watermark is the delay of each source's watermark (0: none).
	watermark time.Duration
	timeout   time.Duration
	profile   string // directory for one CPU profile per query
	// into is where each query's rows go: "view" (a materialized view)
	// or "blackhole" (a blackhole sink, as RisingWave's and Flink's
	// published figures are measured).
	into string
}

// nexmarkRun is what one query's run measured.
type nexmarkRun struct {
	query         string
	wall, cpu     time.Duration
	rss           uint64
	p50, p99      float64 // barrier latency, ms
	barriers      int
	events        int64
	ceilingEvents float64 // events/s of the ceiling over the same sources
}

func (r nexmarkRun) eventsPerSec() float64    { return float64(r.events) / r.wall.Seconds() }
func (r nexmarkRun) eventsPerCPUSec() float64 { return float64(r.events) / r.cpu.Seconds() }

func parseNexmarkFlags(args []string, stderr io.Writer) (nexmarkConfig, error) {
	var c nexmarkConfig
	var query string
	var all bool
	fs := flag.NewFlagSet("sluice-bench nexmark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addEngineFlags(fs, &c.engine)
	fs.StringVar(&query, "query", "q0", "queries to run, comma-separated (q0, q1, …)")
	fs.BoolVar(&all, "all", false, "run every query Sluice can run")
	fs.Int64Var(&c.events, "events", 1_000_000, "events of the combined stream each query reads (1:3:46 people, auctions, bids)")
	fs.IntVar(&c.splits, "splits", 0, "splits per source (0: the parallelism, or the number of cores)")
	fs.DurationVar(&c.watermark, "watermark", 4*time.Second,
		"declare WATERMARK FOR date_time AS date_time - this on every source, as RisingWave's benchmark does (0: none)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "give up on a query after this long")
	fs.StringVar(&c.profile, "cpuprofile-dir", "", "write each query's engine CPU profile to DIR/<query>.pprof and its allocations to DIR/<query>.pprof.allocs")
	fs.StringVar(&c.into, "into", "view", "where each query's rows go: view (a materialized view) or blackhole (a blackhole sink)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.queries, err = pickQueries(query, all); err != nil {
		return c, usageError{err}
	}
	if c.splits == 0 {
		c.splits = c.engine.parallelism
		if c.splits == 0 {
			c.splits = runtime.NumCPU()
		}
	}
	switch {
	case fs.NArg() > 0:
		return c, usageError{errors.New("unexpected arguments")}
	case c.into != "view" && c.into != "blackhole":
		return c, usageError{errors.New("-into must be view or blackhole")}
	case c.engine.barrier <= 0 || c.events < 1 || c.splits < 1 || c.timeout <= 0:
		return c, usageError{errors.New("-barrier-interval-ms, -events, -splits and -timeout must be positive")}
	}
	return c, nil
}

func runNexmark(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseNexmarkFlags(args, stderr)
	if err != nil {
		return err
	}
	errw := &syncWriter{w: stderr}
	ceilings := map[string]nexmarkRun{}
	var runs []nexmarkRun
	for _, q := range c.queries {
		key := strings.Join(q.sources, "+")
		ceil, ok := ceilings[key]
		if !ok {
			if ceil, err = runNexmarkQuery(ctx, c, ceilingQuery(q.sources), errw); err != nil {
				return err
			}
			ceilings[key] = ceil
			runs = append(runs, ceil)
		}
		r, err := runNexmarkQuery(ctx, c, q, errw)
		if err != nil {
			return err
		}
		r.ceilingEvents = ceil.eventsPerSec()
		runs = append(runs, r)
	}
	return writeNexmarkRuns(stdout, c, runs)
}

// runNexmarkQuery runs q in a fresh serve child.
func runNexmarkQuery(ctx context.Context, c nexmarkConfig, q nexmarkQuery, stderr io.Writer) (nexmarkRun, error) {
	fmt.Fprintf(stderr, "nexmark: %s over %d events in %d splits\n", q.name, c.events, c.splits)
	prof := ""
	if c.profile != "" {
		prof = filepath.Join(c.profile, strings.NewReplacer("(", "-", ")", "", "+", "-").Replace(q.name)+".pprof")
	}
	srv, err := startServerProcess(ctx, c.engine, prof, stderr, "-watch-sources")
	if err != nil {
		return nexmarkRun{}, err
	}
	defer func() { _ = srv.Close() }()
	conn, err := connectSimple(ctx, srv.dsn)
	if err != nil {
		return nexmarkRun{}, err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	for _, s := range q.sources {
		if _, err := conn.Exec(ctx, sourceDDL(s, c.events, c.splits, c.watermark)); err != nil {
			return nexmarkRun{}, fmt.Errorf("%s: create source %s: %w", q.name, s, err)
		}
	}
	cpu0, err := treeCPU(srv.pid())
	if err != nil {
		return nexmarkRun{}, err
	}
	t0 := time.Now()
	if _, err := conn.Exec(ctx, c.createStatement(q)); err != nil {
		return nexmarkRun{}, fmt.Errorf("%s: %w", q.name, err)
	}
	r := nexmarkRun{query: q.name, events: c.events}
	if err := r.await(ctx, srv, c.timeout); err != nil {
		return r, fmt.Errorf("%s: %w", q.name, err)
	}
	r.wall = time.Since(t0)
	cpu1, err := treeCPU(srv.pid())
	if err != nil {
		return r, err
	}
	r.cpu, r.rss = cpu1-cpu0, peakRSS(srv.pid())
	if q.name == "q0" && c.into == "view" {
		if err := checkQ0(ctx, conn, c.events); err != nil {
			return r, err
		}
	}
	return r, nil
}

// createStatement creates the job running q: a view, or a blackhole
// sink. The ceiling always runs into a view (its filter keeps no row).
func (c nexmarkConfig) createStatement(q nexmarkQuery) string {
	if c.into == "blackhole" && !strings.HasPrefix(q.name, "ceiling") {
		return "CREATE SINK v AS " + q.sql + " WITH (connector = 'blackhole')"
	}
	return "CREATE MATERIALIZED VIEW v AS " + q.sql
}

// await waits for the child's sources-done line and reads the barrier
// latencies from it.
func (r *nexmarkRun) await(ctx context.Context, srv *serverProcess, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case line := <-srv.lines:
			if msg, failed := strings.CutPrefix(line, sourcesFailed+"\t"); failed {
				return fmt.Errorf("the server could not read its sources' progress: %s", msg)
			}
			rest, ok := strings.CutPrefix(line, sourcesDone+"\t")
			if !ok {
				continue
			}
			f := strings.Split(rest, "\t")
			if len(f) != 3 {
				return fmt.Errorf("bad line %q", line)
			}
			r.p50, _ = strconv.ParseFloat(f[0], 64)
			r.p99, _ = strconv.ParseFloat(f[1], 64)
			r.barriers, _ = strconv.Atoi(f[2])
			return nil
		case err := <-srv.done:
			srv.done <- err // for Close, which waits for it
			return fmt.Errorf("the server exited: %v", err)
		case <-timer.C:
			return fmt.Errorf("not done after %v", timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// checkQ0 compares q0's view with the generator: one row per bid, the
// prices summing alike. A benchmark that lost rows would measure nothing.
func checkQ0(ctx context.Context, conn *pgx.Conn, events int64) error {
	g, err := nexmark.NewGenerator(nexmark.DefaultConfig())
	if err != nil {
		return err
	}
	var n, sum int64
	for i := range events {
		if g.KindOf(g.Number(i)) == nexmark.KindBid {
			e := g.Event(g.Number(i))
			n, sum = n+1, sum+e.Bid.Price
		}
	}
	var gotN, gotSum int64
	if err := conn.QueryRow(ctx, "SELECT count(*), sum(price) FROM v").Scan(&gotN, &gotSum); err != nil {
		return fmt.Errorf("q0: check: %w", err)
	}
	if gotN != n || gotSum != sum {
		return fmt.Errorf("q0: the view has %d bids summing to %d; the generator made %d summing to %d", gotN, gotSum, n, sum)
	}
	return nil
}

func writeNexmarkRuns(w io.Writer, c nexmarkConfig, runs []nexmarkRun) error {
	wm := "none"
	if c.watermark > 0 {
		wm = "date_time - " + c.watermark.String()
	}
	fmt.Fprintf(w, "sluice-bench nexmark\n  events:      %d per query\n  splits:      %d per source\n  watermark:   %s\n  into:        %s\n  cores:       %d\n  load:        %s\n\n",
		c.events, c.splits, wm, c.into, runtime.NumCPU(), loadAverage())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "query\tevents/s\tevents/CPU-s\tCPU s\tof ceiling\tpeak RSS\tbarrier p50\tbarrier p99")
	for _, r := range runs {
		of := "-"
		if r.ceilingEvents > 0 {
			of = fmt.Sprintf("%.2f", r.eventsPerSec()/r.ceilingEvents)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%s\t%.0f MiB\t%.0f ms\t%.0f ms\n", r.query, r.eventsPerSec(), r.eventsPerCPUSec(),
			r.cpu.Seconds(), of, float64(r.rss)/(1<<20), r.p50, r.p99)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		if _, err := fmt.Fprintf(w, `{"bench":"nexmark","query":%q,"events":%d,"events_per_sec":%.0f,"events_per_cpu_sec":%.0f,`+
			`"cpu_sec":%.3f,"ceiling_events_per_sec":%.0f,"peak_rss_mib":%.1f,"barrier_p50_ms":%.1f,"barrier_p99_ms":%.1f}`+"\n",
			r.query, r.events, r.eventsPerSec(), r.eventsPerCPUSec(), r.cpu.Seconds(), r.ceilingEvents,
			float64(r.rss)/(1<<20), r.p50, r.p99); err != nil {
			return err
		}
	}
	return nil
}
