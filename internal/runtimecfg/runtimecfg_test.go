package runtimecfg

import (
	"slices"
	"testing"
)

// TestEnvironMergesGODEBUG: the server's settings join a GODEBUG the
// environment has, one the environment sets itself wins, no second
// GODEBUG is added, and Applied says when nothing is missing.
func TestEnvironMergesGODEBUG(t *testing.T) {
	cases := []struct {
		env  []string
		want string
	}{
		{[]string{"PATH=/bin"}, "GODEBUG=madvdontneed=0"},
		{[]string{"GODEBUG=gctrace=1", "PATH=/bin"}, "GODEBUG=gctrace=1,madvdontneed=0"},
		{[]string{"GODEBUG=madvdontneed=1"}, "GODEBUG=madvdontneed=1"},
		{[]string{"GODEBUG=gctrace=1,madvdontneed=1"}, "GODEBUG=gctrace=1,madvdontneed=1"},
		{[]string{"GODEBUG=gctrace=1", "GODEBUG=madvdontneed=1"}, "GODEBUG=gctrace=1,madvdontneed=0"}, // the first counts
	}
	for _, c := range cases {
		got := Environ(c.env)
		var godebugs []string
		for _, kv := range got {
			if len(kv) > 8 && kv[:8] == "GODEBUG=" {
				godebugs = append(godebugs, kv)
			}
		}
		if !slices.Equal(godebugs, []string{c.want}) || !slices.Contains(got, "PATH=/bin") != !slices.Contains(c.env, "PATH=/bin") {
			t.Errorf("Environ(%q) = %q, want one %q", c.env, got, c.want)
		}
		if !Applied(c.want[len("GODEBUG="):]) {
			t.Errorf("Applied(%q) = false", c.want)
		}
	}
	if Applied("gctrace=1") || Applied("") {
		t.Error("Applied is true without madvdontneed")
	}
}
