package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNexmarkSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts engines")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	args := []string{"nexmark", "-query", "q0,q7", "-events", "20000", "-barrier-interval-ms", "100", "-cpuprofile-dir", dir}
	if code := dispatch(ctx, args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	t.Log(out.String())
	queries := map[string]bool{}
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m struct {
			Query        string  `json:"query"`
			EventsPerSec float64 `json:"events_per_sec"`
			CPU          float64 `json:"cpu_sec"`
			Ceiling      float64 `json:"ceiling_events_per_sec"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if m.EventsPerSec <= 0 || m.CPU <= 0 || (m.Query != "ceiling(bid)" && m.Ceiling <= 0) {
			t.Errorf("implausible %s", line)
		}
		queries[m.Query] = true
	}
	for _, q := range []string{"ceiling(bid)", "q0", "q7"} {
		if !queries[q] {
			t.Errorf("no line for %s", q)
		}
		if st, err := os.Stat(filepath.Join(dir, strings.NewReplacer("(", "-", ")", "").Replace(q)+".pprof")); err != nil || st.Size() == 0 {
			t.Errorf("no profile for %s: %v", q, err)
		}
	}
}

func TestParseNexmarkFlags(t *testing.T) {
	c, err := parseNexmarkFlags([]string{"-parallelism", "3"}, io.Discard)
	if err != nil || c.events != 1_000_000 || c.splits != 3 || len(c.queries) != 1 || c.queries[0].name != "q0" {
		t.Fatalf("defaults %+v, %v", c, err)
	}
	if c, err := parseNexmarkFlags([]string{"-all"}, io.Discard); err != nil || len(c.queries) != len(nexmarkQueries) {
		t.Fatalf("-all: %d queries, %v", len(c.queries), err)
	}
	for _, bad := range [][]string{{"-query", "q99"}, {"-events", "0"}, {"extra"}} {
		if _, err := parseNexmarkFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
