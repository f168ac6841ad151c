// Command sluice-peer runs the peer sqllogictest suites (RisingWave's e2e
// files under ../shared/peer-tests) against Sluice, each file on a fresh
// in-process playground (in-memory engine plus pgwire server), and prints
// per suite "N passed, M failed" (files) with record counts and the most
// common failure causes.
//
//	sluice-peer [--verbose] [--timeout 30s] [--top 10] [SUITE_DIR...]
//
// Without arguments it runs ../shared/peer-tests/rw and
// ../shared/peer-tests/nexmark/standalone when they exist. Failing files
// are reported, not fatal: the exit status is 0 unless the harness itself
// failed (a missing suite, a playground that would not start), then 1;
// usage errors give 2.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/session"
	"github.com/sluice-db/sluice/internal/sqllogic"
)

type config struct {
	verbose bool
	timeout time.Duration
	top     int
	suites  []string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("sluice-peer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.verbose, "verbose", false, "print every failure of every file")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "limit per statement or query")
	fs.IntVar(&c.top, "top", 10, "how many failure causes to list per suite")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.suites = fs.Args()
	if len(c.suites) == 0 {
		for _, d := range []string{"../shared/peer-tests/rw", "../shared/peer-tests/nexmark/standalone"} {
			if _, err := os.Stat(d); err == nil {
				c.suites = append(c.suites, d)
			}
		}
		if len(c.suites) == 0 {
			return c, fmt.Errorf("no suites given and ../shared/peer-tests not found")
		}
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice-peer:", err)
		stop()
		os.Exit(2)
	}
	code := 0
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sluice-peer:", err)
		code = 1
	}
	stop()
	os.Exit(code)
}

// run runs every suite and prints its summary.
func run(ctx context.Context, c config, out io.Writer) error {
	for _, suite := range c.suites {
		sum, err := runSuite(ctx, c, suite, out)
		if err != nil {
			return fmt.Errorf("suite %s: %w", suite, err)
		}
		printSummary(out, suite, sum, c.top)
	}
	return nil
}

// runSuite runs one suite, each file against a fresh playground. A
// playground that fails to start is a harness error.
func runSuite(ctx context.Context, c config, suite string, out io.Writer) (sqllogic.Summary, error) {
	var harnessErr error
	opts := sqllogic.Options{
		RecordTimeout: c.timeout,
		BeforeFile: func(ctx context.Context, path string) (string, func(), error) {
			p, err := session.StartPlayground(ctx, engine.Options{BarrierInterval: 10 * time.Millisecond, Parallelism: 2, CheckInserts: true}, session.Config{})
			if err != nil {
				harnessErr = err
				return "", nil, err
			}
			return p.Server.DSN(), func() { _ = p.Close() }, nil
		},
		OnFile: func(r sqllogic.FileResult) { printFile(out, r, c.verbose) },
	}
	sum, err := sqllogic.Run(ctx, opts, suite)
	if err == nil {
		err = harnessErr
	}
	return sum, err
}

func printFile(out io.Writer, r sqllogic.FileResult, verbose bool) {
	if r.Passed() {
		fmt.Fprintf(out, "PASS %s (%d records, %s)\n", r.Path, r.Records.Passed, r.Duration.Round(time.Millisecond))
		return
	}
	fmt.Fprintf(out, "FAIL %s (%d passed, %d failed)\n", r.Path, r.Records.Passed, r.Records.Failed)
	if !verbose {
		if len(r.Failures) > 0 {
			f := r.Failures[0]
			fmt.Fprintf(out, "     %s: %s\n     sql: %s\n", f.Loc, firstLine(f.Actual), firstLine(f.SQL))
		} else {
			fmt.Fprintf(out, "     %s\n", firstLine(r.FirstProblem()))
		}
		return
	}
	for _, f := range r.Failures {
		fmt.Fprintf(out, "     %s\n", strings.ReplaceAll(f.String(), "\n", "\n     "))
	}
	if r.Err != nil {
		fmt.Fprintf(out, "     %v\n", r.Err)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// printSummary prints the suite's tallies and its most frequent failure
// causes: the actual outcome of each file's first failed record (later
// ones are mostly its consequences), quoted names blurred so that similar
// errors group together.
func printSummary(out io.Writer, suite string, sum sqllogic.Summary, top int) {
	fmt.Fprintf(out, "%s: %d passed, %d failed (files); records: %d passed (%d semantically), %d failed, %d skipped\n",
		suite, sum.FilesPassed, sum.FilesFailed, sum.Records.Passed, sum.Records.Semantic, sum.Records.Failed, sum.Records.Skipped)
	causes := map[string]int{}
	for _, f := range sum.Files {
		if f.Err != nil {
			causes["file error: "+blur(f.Err.Error())]++
		}
		if len(f.Failures) > 0 {
			causes[blur(f.Failures[0].Actual)]++
		}
	}
	type cause struct {
		text string
		n    int
	}
	var cs []cause
	for k, n := range causes {
		cs = append(cs, cause{k, n})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].n > cs[j].n || (cs[i].n == cs[j].n && cs[i].text < cs[j].text) })
	for i, c := range cs {
		if i >= top {
			break
		}
		fmt.Fprintf(out, "  %4d × %s\n", c.n, c.text)
	}
}

// blur shortens an outcome to its first line, quoted names replaced, so
// that the same error on different objects counts as one cause.
func blur(s string) string {
	s = firstLine(s)
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '"':
			if !in {
				b.WriteString(`"…"`)
			}
			in = !in
		case !in:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if len(out) > 160 {
		out = out[:160] + "…"
	}
	return out
}
