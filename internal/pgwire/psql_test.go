package pgwire

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/testenv"
	"github.com/sluice-db/sluice/internal/types"
)

// psql runs Debian's psql (libpq, simple protocol) against ts.
func psql(t *testing.T, ts *testServer, password, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	path := testenv.LookPath(t, "psql", "apt-get install -y postgresql-client")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	base := []string{"-X", "-h", "127.0.0.1", "-p", strconv.Itoa(ts.port), "-U", "root", "-d", "dev", "-v", "ON_ERROR_STOP=1"}
	cmd := exec.CommandContext(ctx, path, append(base, args...)...)
	cmd.Env = []string{"PGCONNECT_TIMEOUT=5", "PGPASSWORD=" + password, "LANG=C.UTF-8"}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func TestPsqlQueries(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	out, stderr, err := psql(t, ts, "", "", "-At", "-c", "select 5")
	if err != nil || out != "5\n" {
		t.Fatalf("select: %q %q %v", out, stderr, err)
	}
	// Every type's text form, as libpq hands it to psql.
	out, stderr, err = psql(t, ts, "", "", "-At", "-F", "|", "-c", "types")
	if err != nil {
		t.Fatalf("types: %q %v", stderr, err)
	}
	var want strings.Builder
	for _, row := range typesRows() {
		for c, col := range typesTable {
			if c > 0 {
				want.WriteByte('|')
			}
			if row[c] != nil {
				want.WriteString(types.FormatDatum(row[c], col.typ))
			}
		}
		want.WriteByte('\n')
	}
	if out != want.String() {
		t.Fatalf("types:\n got %q\nwant %q", out, want.String())
	}
}

func TestPsqlError(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	_, stderr, err := psql(t, ts, "", "", "-c", "bad")
	if err == nil || !strings.Contains(stderr, `ERROR:  syntax error at or near "bad"`) ||
		!strings.Contains(stderr, "DETAIL:  the detail") || !strings.Contains(stderr, "HINT:  the hint") {
		t.Fatalf("stderr %q, err %v", stderr, err)
	}
	// After an error psql's session goes on (without ON_ERROR_STOP).
	out, stderr, err := psql(t, ts, "", "bad;\nselect 6;\n", "-At", "-v", "ON_ERROR_STOP=0")
	if err != nil || out != "6\n" {
		t.Fatalf("after error: %q %q %v", out, stderr, err)
	}
}

func TestPsqlSCRAM(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{Users: map[string]string{"root": "pw"}})
	if out, stderr, err := psql(t, ts, "pw", "", "-At", "-c", "select 8"); err != nil || out != "8\n" {
		t.Fatalf("right password: %q %q %v", out, stderr, err)
	}
	_, stderr, err := psql(t, ts, "nope", "", "-At", "-c", "select 8")
	if err == nil || !strings.Contains(stderr, `password authentication failed for user "root"`) {
		t.Fatalf("wrong password: %q %v", stderr, err)
	}
}

func TestPsqlCopyFromStdin(t *testing.T) {
	h := &fakeHandler{}
	ts := startServer(t, h, Config{})
	out, stderr, err := psql(t, ts, "", "1\tone\n2\t\\N\n\\.\n", "-c", "copy")
	if err != nil || strings.TrimSpace(out) != "COPY 2" {
		t.Fatalf("%q %q %v", out, stderr, err)
	}
	if want := [][]string{{"1", "one"}, {"2", "NULL"}}; !equalRows(h.copied, want) {
		t.Fatalf("copied %q", h.copied)
	}
}

// TestPsqlCancel: Ctrl-C in psql sends a CancelRequest on a new
// connection; the running statement ends with 57014's message.
func TestPsqlCancel(t *testing.T) {
	path := testenv.LookPath(t, "psql", "apt-get install -y postgresql-client")
	h := &fakeHandler{sleeping: make(chan struct{})}
	ts := startServer(t, h, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(ts.port), "-U", "root", "-d", "dev", "-c", "sleep")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = []string{"PGCONNECT_TIMEOUT=5"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.sleeping:
	case <-ctx.Done():
		t.Fatal("psql never ran sleep")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == nil || !strings.Contains(stderr.String(), "canceling statement due to user request") {
		t.Fatalf("stderr %q, err %v", stderr.String(), err)
	}
}
