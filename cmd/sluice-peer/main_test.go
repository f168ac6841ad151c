package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunReportsWithoutFailing runs a tiny suite with one passing and one
// failing file: both are reported and run returns no error.
func TestRunReportsWithoutFailing(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.slt", "statement ok\nCREATE TABLE t (a int)\n\nstatement ok\nINSERT INTO t VALUES (1), (2)\n\nstatement ok\nFLUSH\n\nquery I rowsort\nSELECT a FROM t\n----\n1\n2\n")
	write("b.slt", "query I\nSELECT 1\n----\n2\n")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, config{timeout: 10 * time.Second, top: 5, suites: []string{dir}}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "1 passed, 1 failed (files)") || !strings.Contains(s, "PASS") || !strings.Contains(s, "FAIL") {
		t.Fatalf("output:\n%s", s)
	}
}

func TestMissingSuiteIsHarnessError(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), config{suites: []string{"/nonexistent/suite"}}, &out); err == nil {
		t.Fatal("missing suite accepted")
	}
}
