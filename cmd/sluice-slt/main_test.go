package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/sqllogic/pgtest"
)

func TestCommand(t *testing.T) {
	dsn := pgtest.StartPostgres(t)
	ctx := context.Background()

	var out, errOut bytes.Buffer
	code := run(ctx, []string{"--dsn", dsn, "--fresh-db", "testdata/good.slt", "testdata/wrong.slt"}, &out, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasPrefix(lines[0], "PASS testdata/good.slt") {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "FAIL testdata/wrong.slt") || !strings.Contains(out.String(), "wrong.slt:4") {
		t.Errorf("failure not reported with its line:\n%s", out.String())
	}
	if got := lines[len(lines)-2]; got != "1 passed, 1 failed" {
		t.Errorf("closing line %q", got)
	}
	if got := lines[len(lines)-1]; got != "records: 4 passed (0 only semantically), 1 failed, 0 skipped" {
		t.Errorf("record line %q", got)
	}

	out.Reset()
	if code := run(ctx, []string{"--dsn", dsn, "--fresh-db", "testdata/good.slt"}, &out, &errOut); code != 0 {
		t.Errorf("exit %d for a passing file\n%s", code, out.String())
	}
	if code := run(ctx, []string{"--dsn", dsn}, &out, &errOut); code != 2 {
		t.Errorf("exit %d without paths, want 2", code)
	}
}
