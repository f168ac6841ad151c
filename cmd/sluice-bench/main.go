// Command sluice-bench runs Sluice's benchmarks. Each subcommand starts an
// engine (on-disk store in a temporary directory, like the playground) and
// talks to it over pgwire with pgx as a user would. drop-under-stall runs
// the engine in its own process and reads goroutines, heap and CPU time
// from it; ingest runs it in a child process (sluice-bench serve), so the
// server's CPU and memory are measured apart from the clients', as
// PostgreSQL's are.
//
//	sluice-bench drop-under-stall [flags]   DROP while a join holds the barrier
//	sluice-bench ingest [flags]             the write path against PostgreSQL 15
//	sluice-bench nexmark [flags]            Nexmark queries fed by the nexmark connector
//	sluice-bench nexmark-verify [flags]     the Nexmark views against PostgreSQL
//	sluice-bench nexmark-data [flags]       generated Nexmark events as table rows
//	sluice-bench serve [flags]              one engine for a parent sluice-bench
//
// Every subcommand prints a readable table, then one JSON line per metric
// ({"bench":…,"metric":…}) for scripts. Progress goes to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one benchmark. run parses its own flags from args.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{name: "drop-under-stall", summary: "DROP a view whose join holds the barrier (issue 4's reference stall)", run: runDropUnderStall},
		{name: "ingest", summary: "COPY, views, concurrent INSERT and UPDATE by key against PostgreSQL (issue 8)", run: runIngest},
		{name: "nexmark", summary: "Nexmark queries as views fed by the nexmark connector, against the generator alone (issue 10)", run: runNexmark},
		{name: "nexmark-verify", summary: "the Nexmark views over N events against PostgreSQL's queries over the same events (issue 10)", run: runNexmarkVerify},
		{name: "nexmark-data", summary: "write generated Nexmark events as person, auction and bid rows (COPY text or CSV) with their DDL", run: runNexmarkData},
		{name: "serve", summary: "serve one engine for a parent sluice-bench until stdin closes (ingest runs it)", run: runServe},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError marks a bad command line (exit status 2).
type usageError struct{ error }

// dispatch runs the subcommand named by args[0] and returns the exit
// status: 0 ok, 1 the benchmark failed, 2 usage.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(stderr)
		return 2
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		var ue usageError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "sluice-bench %s: %v\n", c.name, err)
			return 2
		default:
			fmt.Fprintf(stderr, "sluice-bench %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "sluice-bench: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sluice-bench <command> [flags]   (sluice-bench <command> -h for its flags)")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-18s %s\n", c.name, c.summary)
	}
}
