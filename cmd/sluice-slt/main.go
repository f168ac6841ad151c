// Command sluice-slt runs sqllogictest files against a Postgres-protocol
// server over the simple query protocol, as sqllogictest-rs 0.29 does.
//
//	sluice-slt [--dsn URL] [--label L]... [--fail-fast] [--verbose] PATH...
//
// Directories are walked for *.slt. For each file it prints PASS or FAIL
// (with the first failure), then "N passed, M failed" counting files, and a
// line of record counts including how many passed only semantically. The
// exit status is 1 if any file failed, 2 on usage or setup errors.
//
// --fresh-db gives each file its own database on the server (CREATE
// DATABASE, for Postgres); --postgres starts a private Postgres cluster
// (see internal/sqllogic/pgtest) and implies --fresh-db, which is how to
// see what the reference engine makes of a suite.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/sqllogic"
	"github.com/sluice-db/sluice/internal/sqllogic/pgtest"
)

type labels []string

func (l *labels) String() string     { return strings.Join(*l, ",") }
func (l *labels) Set(v string) error { *l = append(*l, v); return nil }

type config struct {
	dsn        string
	labels     labels
	failFast   bool
	verbose    bool
	freshDB    bool
	postgres   bool
	noSemantic bool
	timeout    time.Duration
	paths      []string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("sluice-slt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dsn, "dsn", "postgres://root@127.0.0.1:4566/dev?sslmode=disable", "server URL")
	fs.Var(&c.labels, "label", "label for skipif/onlyif (repeatable); \"postgres\" is always set")
	fs.BoolVar(&c.failFast, "fail-fast", false, "stop after the first failed file")
	fs.BoolVar(&c.verbose, "verbose", false, "print every record and every failure")
	fs.BoolVar(&c.freshDB, "fresh-db", false, "run each file in a new database created through --dsn")
	fs.BoolVar(&c.postgres, "postgres", false, "start a private Postgres and run against it (implies --fresh-db)")
	fs.BoolVar(&c.noSemantic, "no-semantic", false, "compare results as strings only")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "limit per statement or query (0: none)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sluice-slt [flags] PATH...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.paths = fs.Args()
	if len(c.paths) == 0 {
		fs.Usage()
		return c, fmt.Errorf("no test paths")
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "sluice-slt:", err)
		return 2
	}
	opts := sqllogic.Options{
		DSN:           c.dsn,
		Labels:        c.labels,
		FailFast:      c.failFast,
		NoSemantic:    c.noSemantic,
		RecordTimeout: c.timeout,
		OnFile:        func(r sqllogic.FileResult) { printFile(stdout, r, c.verbose) },
	}
	if c.verbose {
		opts.Trace = stdout
	}
	if c.postgres {
		srv, err := pgtest.Start(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "sluice-slt:", err)
			return 2
		}
		defer srv.Stop()
		opts.DSN, c.freshDB = srv.DSN("postgres"), true
	}
	if c.freshDB {
		opts.BeforeFile = sqllogic.FreshDatabases(opts.DSN)
	}
	sum, err := sqllogic.Run(ctx, opts, c.paths...)
	if err != nil {
		fmt.Fprintln(stderr, "sluice-slt:", err)
		return 2
	}
	printSummary(stdout, sum)
	if sum.FilesFailed > 0 {
		return 1
	}
	return 0
}

func printFile(w io.Writer, r sqllogic.FileResult, verbose bool) {
	n := r.Records
	if r.Passed() {
		fmt.Fprintf(w, "PASS %s (%d records, %d semantic, %d skipped, %s)\n",
			r.Path, n.Passed, n.Semantic, n.Skipped, r.Duration.Round(time.Millisecond))
		return
	}
	fmt.Fprintf(w, "FAIL %s (%d passed, %d failed)\n", r.Path, n.Passed, n.Failed)
	if r.Err != nil {
		fmt.Fprintf(w, "  %v\n", r.Err)
		return
	}
	shown := r.Failures
	if !verbose {
		shown = shown[:1]
	}
	for _, f := range shown {
		fmt.Fprintf(w, "  at %s\n", indentLines(f.String()))
	}
}

func indentLines(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// printSummary ends with the two lines scripts look for; the first is
// exactly "N passed, M failed" (files).
func printSummary(w io.Writer, s sqllogic.Summary) {
	r := s.Records
	fmt.Fprintf(w, "%d passed, %d failed\n", s.FilesPassed, s.FilesFailed)
	fmt.Fprintf(w, "records: %d passed (%d only semantically), %d failed, %d skipped\n",
		r.Passed, r.Semantic, r.Failed, r.Skipped)
}
