package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDashboardPasswordSources: the dashboard's password comes from
// --dashboard-password (with a warning that ps shows it) or the
// environment, not both.
func TestDashboardPasswordSources(t *testing.T) {
	var warn bytes.Buffer
	c, err := parseFlags([]string{"--dashboard-password", "argv"}, &warn)
	if err != nil || c.dashboardPassword != "argv" || !strings.Contains(warn.String(), "visible") {
		t.Fatalf("from argv: %q, %v, warning %q", c.dashboardPassword, err, warn.String())
	}
	t.Setenv(dashboardPasswordEnv, "fromenv")
	if c, err := parseFlags(nil, io.Discard); err != nil || c.dashboardPassword != "fromenv" || c.password != "" {
		t.Fatalf("from the environment: %+v, %v", c, err)
	}
	if _, err := parseFlags([]string{"--dashboard-password", "argv"}, io.Discard); err == nil {
		t.Error("two sources accepted")
	}
}

// TestPlaygroundServesTheDashboard: the playground serves the page at /
// and its API next to /metrics; with a dashboard password, reads are
// open and actions need it.
func TestPlaygroundServesTheDashboard(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	cfg := config{dashboardAddr: "127.0.0.1:0", listenAddr: "127.0.0.1:0", inMemory: true, barrierMS: 20, parallelism: 2,
		dashboardPassword: "s3cret"}
	go func() { done <- run(ctx, cfg, &out) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("playground did not shut down")
		}
	}()
	base := dashboardURL(t, &out)
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, "<title>Sluice</title>") {
		t.Errorf("GET /: %d %.200q", code, body)
	}
	code, body := get("/api/overview")
	var ov struct {
		PasswordRequired bool `json:"password_required"`
		Barrier          struct {
			CommittedEpoch uint64 `json:"committed_epoch"`
		} `json:"barrier"`
	}
	if err := json.Unmarshal([]byte(body), &ov); code != 200 || err != nil || !ov.PasswordRequired {
		t.Errorf("GET /api/overview: %d %v %.200q", code, err, body)
	}
	req, _ := http.NewRequest("POST", base+"/api/jobs/1/pause", nil)
	req.Header.Set("X-Sluice-Action", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "28P01") {
		t.Errorf("POST without the password: %d %s", resp.StatusCode, b)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "sluice_committed_epoch") {
		t.Errorf("GET /metrics next to the dashboard: %d", code)
	}
}

// dashboardURL waits for the banner's dashboard line and returns its URL
// without the final slash.
func dashboardURL(t *testing.T, out *syncBuffer) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(out.String(), "\n") {
			if rest, ok := strings.CutPrefix(line, "dashboard on "); ok {
				return strings.TrimSuffix(rest, "/")
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no dashboard address printed: %q", out.String())
	return ""
}
