// Package testenv decides what a test does when an outside program it
// drives (psql, psycopg2, Java) is missing: it skips in an ad-hoc `go test`
// on a developer's machine, and fails under `make test` and CI, which
// install every such program and must never pass by skipping.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// Strict reports whether missing test programs are failures: under CI
// (CI set) or `make test` (SLUICE_TEST_STRICT=1).
func Strict() bool {
	return os.Getenv("CI") != "" || os.Getenv("SLUICE_TEST_STRICT") == "1"
}

// Missing ends the test because what is not available: a failure when
// Strict, a skip otherwise. how tells the reader how to get it.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	if Strict() {
		t.Fatalf("%s is not available (%s); make test installs it", what, how)
	}
	t.Skipf("%s is not available (%s)", what, how)
}

// Python returns a python3 that imports psycopg2, or ends the test.
// Debian's python3-psycopg2 lives in /usr/bin/python3, which a pyenv shim
// on PATH may hide.
func Python(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import psycopg2").Run() == nil {
			return p
		}
	}
	Missing(t, "psycopg2", "apt-get install -y python3-psycopg2")
	return ""
}

// LookPath returns the path of program, or ends the test.
func LookPath(t testing.TB, program, how string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		Missing(t, program, how)
	}
	return p
}
