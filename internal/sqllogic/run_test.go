package sqllogic

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/sqllogic/pgtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestAgainstPostgres runs the files under testdata/pass and testdata/fail
// against a private Postgres cluster.
func TestAgainstPostgres(t *testing.T) {
	admin := pgtest.StartPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	t.Setenv("SLT_TEST_GREETING", "hello")

	t.Run("pass", func(t *testing.T) {
		var seen []string
		sum, err := Run(ctx, Options{
			BeforeFile: FreshDatabases(admin),
			Labels:     []string{"mylabel"},
			OnFile:     func(r FileResult) { seen = append(seen, filepath.Base(r.Path)) },
		}, "testdata/pass")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sum.Files {
			if !f.Passed() {
				t.Errorf("%s failed: %s", f.Path, f.FirstProblem())
			}
		}
		// *.slt.part files are not run on their own.
		if strings.Join(seen, ",") != "basic.slt,fresh.slt,semantic.slt" {
			t.Errorf("files run: %v", seen)
		}
		if sum.FilesPassed != 3 || sum.FilesFailed != 0 {
			t.Errorf("files: %d passed, %d failed", sum.FilesPassed, sum.FilesFailed)
		}
		if sum.Records.Semantic != 3 {
			t.Errorf("semantic matches = %d, want 3 (the three in semantic.slt)", sum.Records.Semantic)
		}
		// skipif postgres, onlyif another-engine: two records skipped;
		// the record after halt is neither run nor counted.
		if sum.Records.Skipped != 2 {
			t.Errorf("skipped = %d, want 2", sum.Records.Skipped)
		}
	})

	t.Run("fail", func(t *testing.T) {
		sum, err := Run(ctx, Options{DSN: admin}, "testdata/fail/bad.slt")
		if err != nil {
			t.Fatal(err)
		}
		if sum.FilesFailed != 1 || sum.FilesPassed != 0 {
			t.Fatalf("files: %d passed, %d failed", sum.FilesPassed, sum.FilesFailed)
		}
		f := sum.Files[0]
		var lines []int
		for _, fl := range f.Failures {
			lines = append(lines, fl.Loc.Line)
		}
		// Wrong rows (7), an error that did not happen (13), a wrong count
		// (16), and a float that is close but not equal (19).
		if want := []int{7, 13, 16, 19}; !equalInts(lines, want) {
			t.Errorf("failed lines %v, want %v\n%s", lines, want, f.FirstProblem())
		}
		if f.Records.Passed != 2 || f.Records.Failed != 4 {
			t.Errorf("records: %+v", f.Records)
		}
		first := f.Failures[0]
		if first.SQL != "SELECT x FROM f" || first.Expected != "1\n3" || first.Actual != "1\n2" {
			t.Errorf("first failure: %s", first)
		}
	})

	t.Run("shared database without fresh hook", func(t *testing.T) {
		// Without a fresh database per file, fresh.slt trips over the
		// table basic.slt left behind: the isolation above is real.
		sum, err := Run(ctx, Options{DSN: admin, Labels: []string{"mylabel"}},
			"testdata/pass/basic.slt", "testdata/pass/fresh.slt")
		if err != nil {
			t.Fatal(err)
		}
		if sum.FilesPassed != 1 || sum.Files[1].Passed() {
			t.Errorf("want fresh.slt to fail on a shared database: %+v", sum.Files[1])
		}
	})

	t.Run("fail fast and no semantics", func(t *testing.T) {
		sum, err := Run(ctx, Options{BeforeFile: FreshDatabases(admin), FailFast: true, NoSemantic: true},
			"testdata/pass/semantic.slt", "testdata/pass/fresh.slt")
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Files) != 1 || sum.Records.Failed != 3 || sum.Records.Semantic != 0 {
			t.Errorf("files run %d, records %+v", len(sum.Files), sum.Records)
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
