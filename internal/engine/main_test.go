package engine

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain bounds the whole-system property test: each of its cases starts
// an engine and creates a dozen views, so the default of 100 cases per
// property would take minutes. -rapid.checks on the command line wins.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		checks := "25"
		if raceEnabled {
			checks = "6"
		}
		if err := flag.Set("rapid.checks", checks); err != nil {
			os.Exit(2)
		}
	}
	goleak.VerifyTestMain(m)
}
