// Package slt holds Sluice's own sqllogictest suite: the *.slt files in
// this directory, grouped by topic, and the Go test that runs each file on
// a fresh in-process playground.
package slt

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/session"
	"github.com/sluice-db/sluice/internal/sqllogic"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// label lets a file say `skipif sluice` / `onlyif sluice`: the files are
// also meant to be run against Postgres (`sluice-slt --postgres`), where
// records about streaming behaviour do not apply.
const label = "sluice"

// TestSuite runs every file in its own playground, so that files may reuse
// names and a failure in one cannot leak into the next. Results are
// compared as strings only (no semantic fallback): the files are written
// in Postgres's output format, and a formatting gap should fail here.
func TestSuite(t *testing.T) {
	files, err := filepath.Glob("*.slt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no *.slt files in tests/slt")
	}
	// Each file runs twice: with the views' input checked (every insert
	// looked up, every inconsistency reported, as all other tests run) and
	// trusted, as the server runs (inserts and updates written unread).
	for _, f := range files {
		for _, checked := range []bool{true, false} {
			name := strings.TrimSuffix(f, ".slt") + map[bool]string{true: "/checked", false: "/trusted"}[checked]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runFile(t, f, checked)
			})
		}
	}
}

func runFile(t *testing.T, path string, checked bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	opts := sqllogic.Options{
		Labels:        []string{label},
		NoSemantic:    true,
		RecordTimeout: 20 * time.Second,
		BeforeFile: func(ctx context.Context, _ string) (string, func(), error) {
			// Parallelism is pinned so EXPLAIN's shape does not depend on
			// the machine's core count.
			p, err := session.StartPlayground(ctx,
				engine.Options{BarrierInterval: 10 * time.Millisecond, Parallelism: 2, CheckInserts: checked},
				session.Config{Parallelism: 2})
			if err != nil {
				return "", nil, err
			}
			return p.Server.DSN(), func() { _ = p.Close() }, nil
		},
	}
	sum, err := sqllogic.Run(ctx, opts, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Files) != 1 {
		t.Fatalf("ran %d files, want 1", len(sum.Files))
	}
	res := sum.Files[0]
	if res.Err != nil {
		t.Fatalf("%s: %v", path, res.Err)
	}
	for _, f := range res.Failures {
		t.Errorf("%s", f)
	}
	if res.Records.Passed == 0 {
		t.Errorf("%s: no record passed", path)
	}
	t.Logf("%s: %d passed, %d failed, %d skipped in %s", path,
		res.Records.Passed, res.Records.Failed, res.Records.Skipped, res.Duration.Round(time.Millisecond))
}
