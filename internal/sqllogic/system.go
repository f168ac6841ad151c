package sqllogic

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// runSystem runs a `system ok` command with sh in the runner's working
// directory (as sqllogictest-rs does). It must exit 0; with a `----`
// section its stdout lines must match.
func (f *fileRun) runSystem(ctx context.Context, rec Record, command string) (Match, string, string) {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Mismatch, "exit status 0", fmt.Sprintf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if !rec.HasRows {
		return Exact, "", ""
	}
	var got, want []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if l = normalize(l); l != "" {
			got = append(got, l)
		}
	}
	for _, l := range rec.Expected {
		want = append(want, normalize(l))
	}
	if !slices.Equal(got, want) {
		return Mismatch, strings.Join(want, "\n"), strings.Join(got, "\n")
	}
	return Exact, "", ""
}
