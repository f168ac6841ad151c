package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/sqllogic/pgtest"
	"github.com/sluice-db/sluice/internal/testenv"
)

// TestIngestSmoke runs ingest end to end with tiny sizes against a
// private PostgreSQL: every figure is printed, both systems measured, and
// the run exits 0. It asserts nothing about speed.
func TestIngestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an engine and a PostgreSQL cluster")
	}
	if dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(dirs) == 0 {
		testenv.Missing(t, "PostgreSQL server binaries", pgtest.InstallHint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"ingest", "-data-dir", t.TempDir(), "-rows", "2000", "-duration", "1s", "-clients", "4",
		"-updates", "100", "-barrier-interval-ms", "100", "-settle-cap", "10s", "-idle-cpu", "0.5", "-repeat", "2", "-windows", "2"}
	if code := dispatch(ctx, args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	t.Log(out.String())
	text := out.String()
	for _, want := range []string{"copy ", "copy+passthrough view", "copy+group-by view", "4 clients inserts", "update by pk", "update all rows",
		"statements/s", "latency p99", "peak RSS", " cores (runtime.NumCPU", "sluice-bench ingest -data-dir",
		"copy+FLUSH cpu ratio over 2 pairs: median ", "statements/s over 2 alternating pairs of 500ms windows: median pair "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	got := parseBenchMetrics(t, "ingest", text)
	for _, fig := range []string{"copy", "copy_passthrough", "copy_groupby", "inserts", "update_pk", "update_all"} {
		n := 1
		if strings.HasPrefix(fig, "copy") {
			n = 2 // -repeat 2: one sample per repetition
		}
		for _, k := range []string{"_sluice_cpu_s", "_postgres_cpu_s", "_sluice_wall_s", "_postgres_wall_s"} {
			if m, ok := got[fig+k]; !ok || m.N != n || m.P50 == nil || *m.P50 < 0 {
				t.Errorf("%s%s = %+v", fig, k, m)
			}
		}
		for _, k := range []string{"_cpu_ratio", "_wall_ratio"} {
			if _, ok := got[fig+k]; !ok {
				t.Errorf("no %s%s", fig, k)
			}
		}
		if m := got[fig+"_sluice_wall_s"]; m.P50 != nil && *m.P50 <= 0 {
			t.Errorf("%s: sluice wall time %v", fig, *m.P50)
		}
	}
	for _, fig := range []string{"copy", "copy_passthrough", "copy_groupby"} {
		if m := got[fig+"_target_ratio"]; m.N != 2 {
			t.Errorf("%s_target_ratio = %+v, want a ratio for each of 2 repetitions", fig, m)
		}
	}
	for _, k := range []string{"inserts_sluice_latency_ms", "inserts_postgres_latency_ms"} {
		if m := got[k]; m.N < 1 || m.P99 == nil || *m.P99 < *m.P50 {
			t.Errorf("%s = %+v", k, m)
		}
	}
	if m := got["inserts_pair_stmts_ratio"]; m.N != 2 || m.P50 == nil || *m.P50 <= 0 {
		t.Errorf("inserts_pair_stmts_ratio = %+v, want a positive ratio for each of 2 window pairs", m)
	}
	for _, k := range []string{"update_pk_sluice_latency_ms", "update_pk_postgres_latency_ms"} {
		if m := got[k]; m.N != 100 {
			t.Errorf("%s = %+v, want 100 samples", k, m)
		}
	}
	if m := got["sluice_peak_rss_mib"]; m.P50 == nil || *m.P50 <= 0 {
		t.Errorf("peak RSS %+v", m)
	}
}

func TestParseIngestFlags(t *testing.T) {
	c, err := parseIngestFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.rows != 1000000 || c.clients != 16 || c.duration != 10*time.Second || c.updates != 2000 || c.engine.barrier != time.Second || c.engine.inMemory {
		t.Fatalf("defaults %+v", c)
	}
	if len(c.figures) != len(figureKeys) {
		t.Errorf("default figures %v", c.figures)
	}
	if c, err := parseIngestFlags([]string{"-figures", "copy_groupby,inserts"}, io.Discard); err != nil || len(c.figures) != 2 || !c.figures["inserts"] {
		t.Errorf("-figures copy_groupby,inserts: %v, %v", c.figures, err)
	}
	for _, bad := range [][]string{{"-figures", "copy,nope"}, {"-rows", "0"}, {"-clients", "0"}, {"-duration", "0s"}, {"-windows", "0"}, {"-barrier-interval-ms", "0"}, {"extra"}} {
		if _, err := parseIngestFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	// Fields 14–17 are utime, stime, cutime, cstime; the name may hold ") ".
	st, err := parseProcStat("4242 (postgres: a) b) S 4200 4242 4242 0 -1 4194560 1 0 0 0 7 3 20 10 20 0 1 0 100 0 0")
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != 4200 || st.ticks != 40 {
		t.Fatalf("got %+v, want ppid 4200, 40 ticks", st)
	}
	if _, err := parseProcStat("garbage"); err == nil {
		t.Error("garbage parsed")
	}
}

func TestGenerateIngestData(t *testing.T) {
	a, b := generateIngestData(1000, 1), generateIngestData(1000, 1)
	if !bytes.Equal(a.bids, b.bids) || !bytes.Equal(a.keyed, b.keyed) {
		t.Fatal("same seed, different data")
	}
	lines := strings.Split(strings.TrimSuffix(string(a.bids), "\n"), "\n")
	if len(lines) != 1000 || len(strings.Split(lines[0], "\t")) != 7 {
		t.Fatalf("%d lines, first %q", len(lines), lines[0])
	}
	if a.auctionSpan != 10 || a.auctions < 1 || a.auctions > 10 {
		t.Fatalf("auctions %d in a span of %d", a.auctions, a.auctionSpan)
	}
	if n := strings.Count(string(a.auctionInfo), "\n"); n != 10 {
		t.Fatalf("auction_info has %d rows", n)
	}
}
