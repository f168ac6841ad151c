package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/nexmark"
	"github.com/sluice-db/sluice/internal/nexmark/crosscheck"
	"github.com/sluice-db/sluice/internal/sqllogic/pgtest"
)

// nexmark-verify is issue 10's correctness at scale: the Nexmark views
// over N generated events (a million by default) against the same
// queries run by PostgreSQL over the same events, written out by the
// generator as COPY input (package crosscheck). Sluice's views exist
// before the first event, so every row reaches them as a change; the
// events come in -loads COPYs, the views are compared halfway, then
// updates and deletes move rows between groups, join partners and
// filters, and the views are compared again.
//
//	sluice-bench nexmark-verify -events 1000000
type verifyConfig struct {
	engine engineConfig
	events int64
	loads  int
}

func runNexmarkVerify(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var c verifyConfig
	fs := flag.NewFlagSet("sluice-bench nexmark-verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addEngineFlags(fs, &c.engine)
	fs.Int64Var(&c.events, "events", 1_000_000, "events of the combined stream loaded into both (1:3:46 people, auctions, bids)")
	fs.IntVar(&c.loads, "loads", 4, "COPYs the events arrive in (the views are compared after half of them)")
	if err = fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || c.events < 1 || c.loads < 2 || c.engine.barrier <= 0 {
		return usageError{errors.New("-events must be positive, -loads at least 2, -barrier-interval-ms positive")}
	}
	pgSrv, err := pgtest.Start(ctx)
	if err != nil {
		return err
	}
	defer pgSrv.Stop()
	in, err := startInstance(ctx, c.engine, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, in.Close()) }()
	pg, err := pgx.Connect(ctx, pgSrv.DSN("postgres"))
	if err != nil {
		return err
	}
	defer func() { _ = pg.Close(context.Background()) }()
	sl, err := in.connect(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = sl.Close(context.Background()) }()
	phases, err := verify(ctx, c, pg, sl, stderr)
	if err != nil {
		return err
	}
	return writeVerify(stdout, c, phases)
}

// verifyPhase is one comparison of every view.
type verifyPhase struct {
	name    string
	took    time.Duration // loading (and changing) up to it, and comparing
	results []crosscheck.Result
}

func verify(ctx context.Context, c verifyConfig, pg, sl *pgx.Conn, log io.Writer) ([]verifyPhase, error) {
	g, err := nexmark.NewGenerator(nexmark.DefaultConfig())
	if err != nil {
		return nil, err
	}
	qs := crosscheck.Queries(crosscheck.WindowsFor(c.events))
	if err := crosscheck.Setup(ctx, pg, sl); err != nil {
		return nil, err
	}
	if err := crosscheck.CreateViews(ctx, sl, qs); err != nil {
		return nil, err
	}
	var phases []verifyPhase
	t0 := time.Now()
	compare := func(name string) error {
		fmt.Fprintf(log, "nexmark-verify: comparing %d views %s\n", len(qs), name)
		res, err := crosscheck.Compare(ctx, pg, sl, qs)
		phases = append(phases, verifyPhase{name: name, took: time.Since(t0), results: res})
		t0 = time.Now()
		return err
	}
	for l := range int64(c.loads) {
		from, to := l*c.events/int64(c.loads), (l+1)*c.events/int64(c.loads)
		fmt.Fprintf(log, "nexmark-verify: loading events %d..%d\n", from, to-1)
		if err := crosscheck.Load(ctx, g, from, to, pg, sl); err != nil {
			return nil, err
		}
		if l == int64(c.loads)/2-1 {
			if err := compare("after half the events"); err != nil {
				return nil, err
			}
		}
	}
	if err := compare("after all the events"); err != nil {
		return nil, err
	}
	if err := crosscheck.ApplyChanges(ctx, pg, sl); err != nil {
		return nil, err
	}
	return phases, compare("after the updates and deletes")
}

func writeVerify(w io.Writer, c verifyConfig, phases []verifyPhase) error {
	fmt.Fprintf(w, "sluice-bench nexmark-verify\n  events:   %d (windows %s)\n  cores:    %d\n  load:     %s\n\n",
		c.events, crosscheck.WindowsFor(c.events).Size, runtime.NumCPU(), loadAverage())
	failed := 0
	for _, p := range phases {
		fmt.Fprintf(w, "%s (%.1f s):\n", p.name, p.took.Seconds())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  view\tSluice rows\tPostgreSQL rows\tequal")
		for _, r := range p.results {
			eq := "yes"
			if !r.Equal() {
				failed++
				eq = "NO: " + r.FirstDiff
				if r.PG == 0 {
					eq = "NO: PostgreSQL returns no rows; the events do not exercise it"
				}
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\n", r.Query.Name, r.Sluice, r.PG, eq)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, p := range phases {
		for _, r := range p.results {
			if _, err := fmt.Fprintf(w, `{"bench":"nexmark-verify","phase":%q,"view":%q,"sluice_rows":%d,"postgres_rows":%d,"equal":%t}`+"\n",
				p.name, r.Query.Name, r.Sluice, r.PG, r.Equal()); err != nil {
				return err
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d view comparisons differ from PostgreSQL", failed)
	}
	return nil
}
