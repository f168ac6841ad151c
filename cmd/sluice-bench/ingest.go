package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// ingestConfig configures ingest: issue 8's write path, Sluice against
// PostgreSQL on the same generated data in one run.
type ingestConfig struct {
	engine     engineConfig
	rows       int
	clients    int
	duration   time.Duration
	updates    int
	seed       uint64
	settleCap  time.Duration // cap on waiting for both servers to go idle before a figure
	idleCPU    float64       // cores; at or below this a server counts as idle
	idleWindow time.Duration
	cpuProfile string          // file for a CPU profile of the server over the whole run ("": none)
	writeBids  string          // write the bids' COPY text here and measure nothing ("": run)
	repeat     int             // measurements of each COPY figure (ingest_repeat.go)
	windows    int             // alternating windows of the INSERT figure (ingest_pairs.go)
	figures    map[string]bool // the figures to run, by key
	args       []string        // the command line, for the report
}

func parseIngestFlags(args []string, stderr io.Writer) (ingestConfig, error) {
	c := ingestConfig{args: args}
	fs := flag.NewFlagSet("sluice-bench ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addEngineFlags(fs, &c.engine)
	fs.IntVar(&c.rows, "rows", 1000000, "bid rows loaded by the COPY figures and in the UPDATE figure's table")
	fs.IntVar(&c.clients, "clients", 16, "concurrent connections of the INSERT figure")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long the INSERT figure runs on each system, in all its windows")
	fs.IntVar(&c.updates, "updates", 2000, "sequential UPDATEs by primary key")
	fs.IntVar(&c.windows, "windows", 5, "cut each system's -duration of the INSERT figure into this many windows, alternating between the systems")
	fs.IntVar(&c.repeat, "repeat", 1, "measure each COPY figure this many times on fresh tables and show the pair with the median ratio")
	fs.Uint64Var(&c.seed, "seed", 8, "seed of the generated data")
	fs.DurationVar(&c.settleCap, "settle-cap", 60*time.Second, "cap on waiting for both servers to go idle before each figure")
	fs.Float64Var(&c.idleCPU, "idle-cpu", 0.10, "CPU use (cores) at or below which a server counts as idle")
	fs.DurationVar(&c.idleWindow, "idle-window", 250*time.Millisecond, "trailing window over which idle CPU use is measured")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the Sluice server process over the whole run to this file")
	fs.StringVar(&c.writeBids, "write-bids", "", "write the generated bids as COPY text to this file and exit (for scripts/bench/copy-loads.sh)")
	figures := fs.String("figures", strings.Join(figureKeys, ","), "comma-separated figures to run")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.figures = make(map[string]bool)
	for k := range strings.SplitSeq(*figures, ",") {
		if !slices.Contains(figureKeys, k) {
			return c, usageError{fmt.Errorf("-figures: unknown figure %q (figures: %s)", k, strings.Join(figureKeys, ", "))}
		}
		c.figures[k] = true
	}
	return c, c.validate(fs.NArg())
}

// figureKeys are the figures in the order they run.
var figureKeys = []string{"copy", "copy_passthrough", "copy_groupby", "inserts", "update_pk", "update_all"}

func (c ingestConfig) validate(extra int) error {
	switch {
	case extra > 0:
		return usageError{errors.New("unexpected arguments")}
	case c.engine.barrier <= 0:
		return usageError{errors.New("-barrier-interval-ms must be positive")}
	case c.rows < 1 || c.clients < 1 || c.updates < 1 || c.repeat < 1 || c.windows < 1:
		return usageError{errors.New("-rows, -clients, -updates, -repeat and -windows must be at least 1")}
	case c.duration <= 0 || c.settleCap <= 0 || c.idleWindow <= 0 || c.idleCPU <= 0:
		return usageError{errors.New("-duration, -settle-cap, -idle-window and -idle-cpu must be positive")}
	}
	return nil
}

func (c ingestConfig) commandLine() string {
	return strings.TrimSpace("sluice-bench ingest " + strings.Join(c.args, " "))
}

func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	cfg, err := parseIngestFlags(args, stderr)
	if err != nil {
		return err
	}
	stderr = &syncWriter{w: stderr} // the server's child process logs here too
	b := &ingestBench{cfg: cfg, log: stderr}
	b.progress("generating %d bid rows (seed %d)", cfg.rows, cfg.seed)
	b.data = generateIngestData(cfg.rows, cfg.seed)
	b.progress("generated %.1f MiB of COPY text", mib(uint64(b.data.size())))
	if cfg.writeBids != "" {
		return os.WriteFile(cfg.writeBids, b.data.bids, 0o644)
	}

	b.progress("starting Sluice (sluice-bench serve, its own process)")
	srv, err := startServerProcess(ctx, cfg.engine, cfg.cpuProfile, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Close()) }()
	b.progress("starting PostgreSQL")
	pg, err := startPostgres(ctx)
	if err != nil {
		return err
	}
	defer pg.Stop()
	if err := b.open(ctx, srv, pg); err != nil {
		return err
	}
	defer b.close()
	res, err := b.run(ctx)
	if err != nil {
		return err
	}
	res.peakRSS, res.dataBytes, res.auctions = peakRSS(srv.pid()), b.data.size(), b.data.auctions
	return res.write(stdout, cfg, srv, pg, b.notIdle)
}

// run measures every figure, each on fresh tables, Sluice first.
func (b *ingestBench) run(ctx context.Context) (*ingestResults, error) {
	res := &ingestResults{loadStart: loadAverage()}
	for _, f := range loadFigures() {
		if !b.cfg.figures[f.key] {
			continue
		}
		r, err := b.repeatLoad(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.label, err)
		}
		r.peakRSS = peakRSS(b.srv.pid())
		res.figures = append(res.figures, r)
	}
	if b.cfg.figures["inserts"] {
		cr, err := b.clientsFigure(ctx)
		if err != nil {
			return nil, fmt.Errorf("inserts: %w", err)
		}
		res.clients = cr
		cr.figure.peakRSS = peakRSS(b.srv.pid())
		res.figures = append(res.figures, cr.figure)
	}
	if b.cfg.figures["update_pk"] {
		ur, err := b.updateFigure(ctx)
		if err != nil {
			return nil, fmt.Errorf("update by pk: %w", err)
		}
		res.update = ur
		ur.figure.peakRSS = peakRSS(b.srv.pid())
		res.figures = append(res.figures, ur.figure)
	}
	if b.cfg.figures["update_all"] {
		r, err := b.updateAllFigure(ctx)
		if err != nil {
			return nil, fmt.Errorf("update all rows: %w", err)
		}
		r.peakRSS = peakRSS(b.srv.pid())
		res.figures = append(res.figures, r)
	}
	res.loadEnd = loadAverage()
	return res, nil
}

func (b *ingestBench) progress(format string, args ...any) {
	fmt.Fprintf(b.log, format+"\n", args...)
}
