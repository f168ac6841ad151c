package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"playground", "--in-memory", "--barrier-interval-ms", "50", "--query-memory", "3GB"}, io.Discard)
	if err != nil || !c.inMemory || c.barrierMS != 50 || c.listenAddr != "127.0.0.1:4566" || c.queryMemory != 3<<30 {
		t.Fatalf("got %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"serve"}, {"--barrier-interval-ms", "0"}, {"--nope"}, {"--query-memory", "lots"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the writer and a polling reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPlaygroundServesMetricsAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	cfg := config{dashboardAddr: "127.0.0.1:0", listenAddr: "127.0.0.1:0", inMemory: true, barrierMS: 20, parallelism: 2}
	go func() { done <- run(ctx, cfg, &out) }()
	var addr string
	deadline := time.Now().Add(10 * time.Second)
	for addr == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no metrics address printed: %q", out.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if rest, ok := strings.CutPrefix(line, "metrics on http://"); ok {
				addr = strings.TrimSuffix(rest, "/metrics")
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"go_goroutines", "sluice_committed_epoch", "sluice_stream_row_errors_total",
		"sluice_query_memory_used_bytes", "sluice_query_memory_limit_bytes"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	resp, err = http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile") {
		t.Errorf("/debug/pprof/goroutine: %d %.200q", resp.StatusCode, body)
	}
	checkSQL(t, out.String())
	// Now a table and a view exist, with their jobs, actors and DDL.
	resp, err = http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`sluice_view_freshness_seconds{view="mv"}`, "sluice_barrier_latency_seconds_count",
		`sluice_ddl_duration_seconds_count{kind="create_materialized_view",result="ok"} 1`,
		`sluice_job_status{job=`, `sluice_recoveries_total{reason="startup"} 1`, "sluice_actor_output_rows_total{"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics after the view lacks %s", want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("playground did not shut down")
	}
	if !strings.Contains(out.String(), "shutting down") {
		t.Fatalf("output: %q", out.String())
	}
}

// checkSQL connects to the address the banner printed and runs a table,
// a view over it, an insert and a read of the view.
func checkSQL(t *testing.T, banner string) {
	t.Helper()
	var host, port string
	for _, line := range strings.Split(banner, "\n") {
		if _, rest, ok := strings.Cut(line, "psql -h "); ok {
			f := strings.Fields(rest)
			host, port = f[0], f[2]
		}
	}
	if port == "" {
		t.Fatalf("no psql line in banner %q", banner)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://root@%s:%s/dev?sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, sql := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"CREATE MATERIALIZED VIEW mv AS SELECT sum(v) AS s FROM t",
		"INSERT INTO t VALUES (1, 10), (2, 32)",
		"FLUSH",
	} {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	var s string
	if err := c.QueryRow(ctx, "SELECT s::varchar FROM mv").Scan(&s); err != nil || s != "42" {
		t.Fatalf("mv: %q, %v", s, err)
	}
}

// TestPasswordSources: the password comes from --password, a file or the
// environment, exactly one of them; --password warns that ps shows it.
func TestPasswordSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("s3cret\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseFlags([]string{"--password-file", file}, io.Discard)
	if err != nil || c.password != "s3cret" {
		t.Fatalf("from a file: %q, %v", c.password, err)
	}
	t.Setenv(passwordEnv, "fromenv")
	if c, err := parseFlags(nil, io.Discard); err != nil || c.password != "fromenv" {
		t.Fatalf("from the environment: %q, %v", c.password, err)
	}
	if _, err := parseFlags([]string{"--password-file", file}, io.Discard); err == nil {
		t.Error("two sources accepted")
	}
	t.Setenv(passwordEnv, "")
	var warn bytes.Buffer
	if c, err := parseFlags([]string{"--password", "argv"}, &warn); err != nil || c.password != "argv" ||
		!strings.Contains(warn.String(), "visible") {
		t.Errorf("from argv: %q, %v, warning %q", c.password, err, warn.String())
	}
	empty := filepath.Join(t.TempDir(), "empty")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	for _, args := range [][]string{{"--password-file", empty}, {"--password-file", empty + ".missing"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
