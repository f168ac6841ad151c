package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/runtimecfg"
)

// The serve subcommand runs one engine for a parent sluice-bench (ingest),
// so the engine's CPU time and peak memory are its own process's, as for
// PostgreSQL, and not mixed with the benchmark client's goroutines, buffers
// and generated data. It prints one ready line to stdout and serves until
// its stdin closes (the parent's Close, or the parent's death).

const serveReady = "sluice-bench serve ready"

// childEnv marks a child started by a test binary: its TestMain runs
// dispatch on the arguments instead of the tests.
const childEnv = "SLUICE_BENCH_CHILD"

func addEngineFlags(fs *flag.FlagSet, c *engineConfig) {
	c.barrier = time.Second
	fs.Var(msFlag{&c.barrier}, "barrier-interval-ms", "milliseconds between checkpoint barriers (the playground's default)")
	fs.IntVar(&c.parallelism, "parallelism", 0, "actors per distributed fragment (0: number of cores)")
	fs.StringVar(&c.dataDir, "data-dir", "", "store directory (default: a new temporary directory, removed afterwards)")
	fs.BoolVar(&c.inMemory, "in-memory", false, "keep the store in memory instead of on disk")
	fs.DurationVar(&c.commitDelay, "commit-delay", engine.DefaultCommitDelay, "group commit: least time between log syncs (sluice --commit-delay); 0 syncs at once")
}

// msFlag is a flag of whole milliseconds that sets a duration.
type msFlag struct{ d *time.Duration }

func (m msFlag) String() string {
	if m.d == nil {
		return "0"
	}
	return strconv.FormatInt(m.d.Milliseconds(), 10)
}

func (m msFlag) Set(s string) error {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return err
	}
	*m.d = time.Duration(ms) * time.Millisecond
	return nil
}

// args is c as serve's command line.
func (c engineConfig) args() []string {
	a := []string{"-barrier-interval-ms", fmt.Sprint(c.barrier.Milliseconds()), "-parallelism", fmt.Sprint(c.parallelism)}
	if c.dataDir != "" {
		a = append(a, "-data-dir", c.dataDir)
	}
	if c.inMemory {
		a = append(a, "-in-memory")
	}
	return append(a, "-commit-delay", c.commitDelay.String())
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var c engineConfig
	var cpuProfile string
	var watch bool
	fs := flag.NewFlagSet("sluice-bench serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addEngineFlags(fs, &c)
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the engine to this file")
	fs.BoolVar(&watch, "watch-sources", false, "print a line once every job's bounded connector sources are read and committed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.barrier <= 0 || fs.NArg() > 0 {
		return usageError{errors.New("-barrier-interval-ms must be positive and no arguments follow the flags")}
	}
	runtimecfg.TuneGC(os.Getenv) // as cmd/sluice does
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	in, err := startInstance(ctx, c, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, in.Close()) }()
	fmt.Fprintf(stdout, "%s\t%s\t%s\n", serveReady, in.server.DSN(), in.dir)
	if watch {
		wctx, cancel := context.WithCancel(ctx)
		watched := make(chan error, 1)
		go func() { watched <- watchSources(wctx, in.engine, 50*time.Millisecond, stdout) }()
		defer func() {
			cancel()
			if werr := <-watched; werr != nil {
				err = errors.Join(err, fmt.Errorf("watch sources: %w", werr))
			}
		}()
	}
	eof := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(eof) }()
	select {
	case <-eof:
	case <-ctx.Done():
	}
	return nil
}

// syncWriter serializes writes to w: a child's stderr is copied into it by
// os/exec's goroutine while the benchmark writes its progress.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// serverProcess is an engine served by a child sluice-bench.
type serverProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	dsn   string
	dir   string
	done  chan error
	// lines gets the child's stdout lines after the ready line (a few:
	// serve -watch-sources prints one); more than it holds are dropped.
	lines chan string
}

// startServerProcess runs this binary's serve subcommand and waits for
// its ready line. The child's log goes to stderr, which must not be
// written by anything else unless through the same syncWriter.
func startServerProcess(ctx context.Context, c engineConfig, cpuProfile string, stderr io.Writer, extra ...string) (*serverProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve"}, c.args()...)
	if cpuProfile != "" {
		args = append(args, "-cpuprofile", cpuProfile)
	}
	args = append(args, extra...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(runtimecfg.Environ(os.Environ()), childEnv+"=1") // a server's runtime settings
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &serverProcess{cmd: cmd, stdin: stdin, done: make(chan error, 1), lines: make(chan string, 16)}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), serveReady) {
				select { // only the first counts; a second must not block the reader
				case ready <- sc.Text():
				default:
				}
				continue
			}
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		p.done <- cmd.Wait()
	}()
	select {
	case line := <-ready:
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			_ = p.Close()
			return nil, fmt.Errorf("serve: bad ready line %q", line)
		}
		p.dsn, p.dir = f[1], f[2]
		return p, nil
	case err := <-p.done:
		return nil, fmt.Errorf("serve exited before it was ready: %v", err)
	case <-ctx.Done():
		_ = p.Close()
		return nil, ctx.Err()
	}
}

func (p *serverProcess) pid() int { return p.cmd.Process.Pid }

// Close ends the child by closing its stdin, and kills it if it has not
// exited within a minute.
func (p *serverProcess) Close() error {
	_ = p.stdin.Close()
	select {
	case err := <-p.done:
		return err
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("serve did not exit within a minute of its stdin closing: killed; %v", <-p.done)
	}
}
