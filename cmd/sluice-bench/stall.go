package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// stallConfig configures drop-under-stall.
type stallConfig struct {
	engine       engineConfig
	rows         int
	stalls       int
	gracefulRuns int
	gracefulCap  time.Duration
	stallFactor  float64       // DROP once the oldest barrier is this many intervals old
	stallWait    time.Duration // give up if no barrier stalls within this
	settleCap    time.Duration // cap on each wait after a DROP
	idleCPU      float64       // cores; at or below this the process is idle
	idleWindow   time.Duration // the CPU use is measured over this trailing window
	// feed is what amp's join reads besides t: "table" (t again, issue
	// 4's reference stall) or "nexmark" (an endless Nexmark bid source).
	feed string
}

func parseStallFlags(args []string, stderr io.Writer) (stallConfig, error) {
	var c stallConfig
	fs := flag.NewFlagSet("sluice-bench drop-under-stall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addEngineFlags(fs, &c.engine)
	fs.IntVar(&c.rows, "rows", 20000, "rows inserted per stall, all with k = 1 (the join makes rows² rows)")
	fs.IntVar(&c.stalls, "stalls", 20, "stalls ended by an immediate DROP")
	fs.IntVar(&c.gracefulRuns, "graceful-runs", 2, "stalls ended by DROP … GRACEFUL (each may cost -graceful-cap)")
	fs.DurationVar(&c.gracefulCap, "graceful-cap", 60*time.Second, "give up on a graceful DROP after this long")
	fs.Float64Var(&c.stallFactor, "stall-factor", 3, "DROP once the oldest in-flight barrier is this many intervals old")
	fs.DurationVar(&c.stallWait, "stall-wait", 2*time.Minute, "fail if no barrier stalls within this")
	fs.DurationVar(&c.settleCap, "settle-cap", 30*time.Second, "cap on waiting for goroutines, CPU and sibling after a DROP")
	fs.Float64Var(&c.idleCPU, "idle-cpu", 0.10, "CPU use (cores) at or below which the process counts as idle")
	fs.DurationVar(&c.idleWindow, "idle-window", 100*time.Millisecond, "trailing window over which CPU use is measured")
	fs.StringVar(&c.feed, "feed", "table", "what amp joins t with: table (t itself) or nexmark (an unpaced Nexmark bid source, each bid joining every row)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.validate(fs.NArg())
}

func (c stallConfig) validate(extra int) error {
	switch {
	case extra > 0:
		return usageError{errors.New("unexpected arguments")}
	case c.engine.barrier <= 0:
		return usageError{errors.New("-barrier-interval-ms must be positive")}
	case c.rows < 1 || c.stalls < 1 || c.gracefulRuns < 0:
		return usageError{errors.New("-rows and -stalls must be at least 1, -graceful-runs at least 0")}
	case c.gracefulCap <= 0 || c.stallWait <= 0 || c.settleCap <= 0 || c.idleWindow <= 0:
		return usageError{errors.New("caps and windows must be positive")}
	case c.feed != "table" && c.feed != "nexmark":
		return usageError{errors.New("-feed must be table or nexmark")}
	case c.stallFactor <= 0 || c.idleCPU <= 0:
		return usageError{errors.New("-stall-factor and -idle-cpu must be positive")}
	}
	return nil
}

// stallThreshold is how old the oldest barrier must be to call it stuck.
func (c stallConfig) stallThreshold() time.Duration {
	return time.Duration(c.stallFactor * float64(c.engine.barrier))
}

func runDropUnderStall(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	cfg, err := parseStallFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	in, err := startInstance(ctx, cfg.engine, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, in.Close()) }()
	b, err := newStallBench(ctx, cfg, in, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	res, err := b.run(ctx)
	if err != nil {
		return err
	}
	return res.report(cfg, in).write(stdout)
}

// run measures the amplification-free reference, then the immediate
// stalls, then the graceful ones (last: a capped graceful DROP may leave
// work behind that would disturb later rounds).
func (b *stallBench) run(ctx context.Context) (*stallResults, error) {
	res := &stallResults{loadStart: loadAverage()}
	before, err := b.in.barrierStatus(ctx)
	if err != nil {
		return nil, err
	}
	if res.reference, err = b.referenceRound(ctx); err != nil {
		return nil, fmt.Errorf("reference round: %w", err)
	}
	for i := range b.cfg.stalls {
		r, err := b.immediateRound(ctx)
		if err != nil {
			return nil, fmt.Errorf("stall %d: %w", i+1, err)
		}
		b.progress("stall %d/%d: barrier %s old, DROP %s, sibling current after %s", i+1, b.cfg.stalls,
			r.barrierAge.Round(time.Millisecond), r.drop, r.sibling.d.Round(time.Millisecond))
		res.immediate = append(res.immediate, r)
	}
	if err := b.gracefulRounds(ctx, res); err != nil {
		return nil, err
	}
	after, err := b.in.barrierStatus(ctx)
	if err != nil {
		return nil, err
	}
	res.recoveries = after.Recoveries - before.Recoveries
	res.loadEnd = loadAverage()
	return res, nil
}

func (b *stallBench) gracefulRounds(ctx context.Context, res *stallResults) error {
	for i := range b.cfg.gracefulRuns {
		g, err := b.gracefulRound(ctx)
		if err != nil {
			return fmt.Errorf("graceful stall %d: %w", i+1, err)
		}
		if g.unavailable != "" {
			res.gracefulUnavailable = g.unavailable
			b.progress("graceful DROP unavailable: %s", g.unavailable)
			return nil
		}
		b.progress("graceful stall %d/%d: barrier %s old, DROP %s (capped: %t)", i+1, b.cfg.gracefulRuns,
			g.barrierAge.Round(time.Millisecond), g.drop.d.Round(time.Millisecond), !g.drop.reached)
		res.graceful = append(res.graceful, g)
	}
	return nil
}

func (b *stallBench) progress(format string, args ...any) {
	fmt.Fprintf(b.log, format+"\n", args...)
}
