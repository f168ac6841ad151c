// Command sluice runs Sluice. With no arguments (or "playground") it runs
// everything in one process: the store under --data-dir, the meta
// coordinator, a compute node, and the HTTP endpoint serving the
// dashboard at / and /metrics.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/runtimecfg"
	"github.com/sluice-db/sluice/internal/sql/session"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/web"
)

type config struct {
	listenAddr    string
	dashboardAddr string
	dataDir       string
	inMemory      bool
	barrierMS     int
	parallelism   int
	password      string
	maxConns      int
	acceptLoss    bool
	commitDelay   time.Duration
	passwordFile  string
	tlsCert       string
	tlsKey        string
	queryMemory   int64

	// dashboardPassword, when set, is required for the dashboard's
	// actions (pause, drop, …); reads stay open.
	dashboardPassword string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("sluice", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.listenAddr, "listen-addr", "127.0.0.1:4566", "address of the Postgres-protocol listener")
	fs.StringVar(&c.dashboardAddr, "dashboard-addr", "127.0.0.1:5691", "address serving the dashboard at / and /metrics")
	fs.StringVar(&c.dashboardPassword, "dashboard-password", "", "require this password for the dashboard's actions (pause, rate limit, cancel, drop); reads stay open (visible in ps: prefer $"+dashboardPasswordEnv+")")
	fs.StringVar(&c.dataDir, "data-dir", "./sluice-data", "directory of the persistent store")
	fs.BoolVar(&c.inMemory, "in-memory", false, "keep everything in memory (no files)")
	fs.IntVar(&c.barrierMS, "barrier-interval-ms", 1000, "milliseconds between checkpoint barriers")
	fs.IntVar(&c.parallelism, "parallelism", 0, "actors per distributed fragment (default: number of cores)")
	fs.StringVar(&c.password, "password", "", "require this password (SCRAM-SHA-256) for user root; empty trusts every client (visible in ps: prefer --password-file or $"+passwordEnv+")")
	fs.StringVar(&c.passwordFile, "password-file", "", "read the password for user root from this file's first line")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate (chain) for TLS connections (sslmode=require); needs --tls-key")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&c.acceptLoss, "accept-data-loss", false, "open a data directory whose write-ahead log lost acknowledged writes (refused otherwise)")
	fs.DurationVar(&c.commitDelay, "commit-delay", engine.DefaultCommitDelay, "group commit: a log sync that follows another within this time waits until it has passed, so concurrent sessions' writes share it; 0 syncs at once")
	fs.IntVar(&c.maxConns, "max-connections", pgwire.DefaultMaxConnections, "sessions open at once; one more is refused with SQLSTATE 53300")
	fs.Func("query-memory", "memory all running queries share, like 8GB (default: half the machine's); past it they spill to disk or fail with SQLSTATE 53200",
		func(s string) (err error) {
			c.queryMemory, err = session.ParseMemory(s)
			return err
		})
	if len(args) > 0 && args[0] == "playground" {
		args = args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unknown command %q (only \"playground\" exists)", fs.Arg(0))
	}
	if c.barrierMS <= 0 {
		return c, fmt.Errorf("--barrier-interval-ms must be positive")
	}
	if c.maxConns <= 0 {
		return c, fmt.Errorf("--max-connections must be positive")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return c, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if c.password != "" {
		fmt.Fprintf(stderr, "warning: --password is visible to every user of this machine (ps); use --password-file or $%s\n", passwordEnv)
	}
	if c.dashboardPassword != "" {
		fmt.Fprintf(stderr, "warning: --dashboard-password is visible to every user of this machine (ps); use $%s\n", dashboardPasswordEnv)
	}
	if err := c.resolveDashboardPassword(os.Getenv(dashboardPasswordEnv)); err != nil {
		return c, err
	}
	return c, c.resolvePassword(os.Getenv(passwordEnv))
}

// dashboardPasswordEnv names the environment variable that may hold the
// dashboard's password.
const dashboardPasswordEnv = "SLUICE_DASHBOARD_PASSWORD"

// resolveDashboardPassword takes the dashboard's password from
// --dashboard-password or the environment (env), refusing both.
func (c *config) resolveDashboardPassword(env string) error {
	if c.dashboardPassword != "" && env != "" {
		return fmt.Errorf("give the dashboard's password once: --dashboard-password or $%s", dashboardPasswordEnv)
	}
	if env != "" {
		c.dashboardPassword = env
	}
	return nil
}

// passwordEnv names the environment variable that may hold the password.
const passwordEnv = "SLUICE_PASSWORD"

// resolvePassword takes the password from --password, --password-file or
// the environment (env), refusing more than one source or an empty file.
func (c *config) resolvePassword(env string) error {
	sources := 0
	for _, set := range []bool{c.password != "", c.passwordFile != "", env != ""} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		return fmt.Errorf("give the password once: --password, --password-file or $%s", passwordEnv)
	}
	if env != "" {
		c.password = env
	}
	if c.passwordFile == "" {
		return nil
	}
	b, err := os.ReadFile(c.passwordFile)
	if err != nil {
		return fmt.Errorf("--password-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if c.password = strings.TrimSuffix(line, "\r"); c.password == "" {
		return fmt.Errorf("--password-file %s: the first line is empty", c.passwordFile)
	}
	return nil
}

func main() {
	runtimecfg.Reexec() // the runtime's settings, before anything starts
	runtimecfg.TuneGC(os.Getenv)
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := engine.Options{Dir: c.dataDir, InMemory: c.inMemory, Parallelism: c.parallelism,
		BarrierInterval: time.Duration(c.barrierMS) * time.Millisecond, Logger: log, AcceptDataLoss: c.acceptLoss,
		CommitDelay: engine.CommitDelayFlag(c.commitDelay)}
	if c.inMemory {
		opts.Dir = ""
	}
	e, err := engine.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer e.Close()
	g, gctx := task.NewGroup(context.WithoutCancel(ctx))
	defer func() { _ = g.Wait() }()
	pool := batch.NewMemoryPool(c.queryMemory)
	if pool == nil {
		pool = session.DefaultQueryPool()
	}
	srv, err := serveDashboard(gctx, g, c, e, pool)
	if err != nil {
		return err
	}
	where := c.dataDir
	if c.inMemory {
		where = "memory"
	}
	fmt.Fprintf(out, "sluice playground: data in %s, barrier every %d ms\n", where, c.barrierMS)
	fmt.Fprintf(out, "dashboard on http://%s/\n", srv.Addr)
	fmt.Fprintf(out, "metrics on http://%s/metrics\n", srv.Addr)
	sql, err := serveSQL(ctx, c, e, log, pool)
	if err != nil {
		_ = srv.Close()
		return err
	}
	host, port, _ := net.SplitHostPort(sql.Addr())
	fmt.Fprintf(out, "SQL on %s: psql -h %s -p %s -U root -d dev\n", sql.Addr(), host, port)
	<-ctx.Done()
	fmt.Fprintln(out, "shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	serr := sql.Close()
	if err := srv.Shutdown(shutCtx); err != nil {
		return err
	}
	return serr
}

// serveSQL starts the Postgres-protocol listener. Without --password every
// client is trusted, which is only sensible on loopback; with it user root
// must authenticate with SCRAM-SHA-256.
func serveSQL(ctx context.Context, c config, e *engine.Engine, log *slog.Logger, pool *batch.MemoryPool) (*session.Server, error) {
	ln, err := net.Listen("tcp", c.listenAddr)
	if err != nil {
		return nil, fmt.Errorf("listen address %s: %w", c.listenAddr, err)
	}
	pcfg := pgwire.Config{Logger: log, MaxConnections: c.maxConns}
	if c.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		pcfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if c.password != "" {
		pcfg.Users = map[string]string{"root": c.password}
	} else if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		log.Warn("trusting every client on a non-loopback address; set --password", "addr", ln.Addr())
	}
	srv, err := session.Serve(ctx, e, ln, pcfg, session.Config{Parallelism: c.parallelism, Logger: log, QueryPool: pool})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return srv, nil
}

// registerMetrics registers every metric /metrics serves: the Go
// runtime's, the process's, the batch query memory's and the engine's.
func registerMetrics(reg prometheus.Registerer, e *engine.Engine, pool *batch.MemoryPool) error {
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_query_memory_used_bytes",
			Help: "Memory the running batch queries hold of the server's query memory."},
			func() float64 { return float64(pool.Used()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_query_memory_limit_bytes",
			Help: "The server's query memory (--query-memory)."},
			func() float64 { return float64(pool.Limit()) })} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return e.RegisterMetrics(reg)
}

// serveDashboard serves the dashboard at / (its actions need
// --dashboard-password when one is set), the Go runtime, process and
// engine metrics on /metrics, and the Go profiler on /debug/pprof/ (the
// address is loopback by default: profiles show queries' data in stacks,
// never give it out).
func serveDashboard(ctx context.Context, g *task.Group, c config, e *engine.Engine, pool *batch.MemoryPool) (*http.Server, error) {
	addr := c.dashboardAddr
	reg := prometheus.NewRegistry()
	if err := registerMetrics(reg, e, pool); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/", web.New(web.Config{Engine: e, Password: c.dashboardPassword}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dashboard address %s: %w", addr, err)
	}
	srv := &http.Server{Addr: ln.Addr().String(), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	g.Go(ctx, "metrics-http", func(context.Context) error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return srv, nil
}
