package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestNexmarkVerifySmoke runs nexmark-verify over a few thousand events:
// every view is compared in every phase and found equal.
func TestNexmarkVerifySmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and an engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"nexmark-verify", "-events", "6000", "-barrier-interval-ms", "50", "-in-memory"}
	if code := dispatch(ctx, args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	var lines, equal int
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, `{"bench":"nexmark-verify"`) {
			lines++
			if strings.Contains(l, `"equal":true`) {
				equal++
			}
		}
	}
	if lines < 3*20 || equal != lines {
		t.Fatalf("%d of %d comparisons equal, want all of at least 60:\n%s", equal, lines, out.String())
	}
}
