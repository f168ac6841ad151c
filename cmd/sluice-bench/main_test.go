package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		// A serve child started by a test: this binary stands in for
		// sluice-bench.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}

func TestDispatch(t *testing.T) {
	ctx := context.Background()
	var errOut bytes.Buffer
	if code := dispatch(ctx, nil, io.Discard, &errOut); code != 2 || !strings.Contains(errOut.String(), "drop-under-stall") {
		t.Fatalf("no command: code %d, usage %q", code, errOut.String())
	}
	if code := dispatch(ctx, []string{"nope"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("unknown command: code %d, want 2", code)
	}
	if code := dispatch(ctx, []string{"drop-under-stall", "-stalls", "0"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("-stalls 0: code %d, want 2", code)
	}
	if code := dispatch(ctx, []string{"drop-under-stall", "-h"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("-h: code %d, want 0", code)
	}
}

func TestParseStallFlags(t *testing.T) {
	c, err := parseStallFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.rows != 20000 || c.stalls != 20 || c.engine.barrier.Milliseconds() != 1000 || c.gracefulCap.Seconds() != 60 {
		t.Fatalf("defaults %+v", c)
	}
	if got := c.stallThreshold().Milliseconds(); got != 3000 {
		t.Fatalf("stall threshold %d ms, want 3000", got)
	}
	for _, bad := range [][]string{{"-rows", "0"}, {"-barrier-interval-ms", "-1"}, {"-graceful-cap", "0s"}, {"extra"}} {
		if _, err := parseStallFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
