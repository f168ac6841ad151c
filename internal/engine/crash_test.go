package engine

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test runs the engine in a child process (this test binary,
// re-executed), lets it write under load, kills it with SIGKILL at a random
// moment, restarts it on the same data directory, and checks that no
// acknowledged write was lost, none was applied twice, and every view
// equals a recomputation from its inputs.

const crashChildEnv = "SLUICE_CRASH_CHILD_DIR"

// TestCrashChild is the child's body; it only runs when re-executed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("runs only as the crash test's child process")
	}
	ctx := context.Background()
	e, err := Open(ctx, Options{Dir: dir, BarrierInterval: 10 * time.Millisecond, Parallelism: 2, ChunkSize: 64})
	if err != nil {
		fmt.Printf("ERR open: %v\n", err)
		os.Exit(3)
	}
	if err := setupWorkload(ctx, e); err != nil {
		fmt.Printf("ERR setup: %v\n", err)
		os.Exit(3)
	}
	start, _ := strconv.ParseInt(os.Getenv("SLUICE_CRASH_START"), 10, 64)
	fmt.Println("READY")
	for k := start; ; k++ {
		if err := writeOne(ctx, e, k); err != nil {
			fmt.Printf("ERR write %d: %v\n", k, err)
			os.Exit(3)
		}
		fmt.Printf("ACK %d\n", k)
	}
}

// child is one run of the child process.
type child struct {
	cmd   *exec.Cmd
	lines chan string
}

func startChild(t *testing.T, dir string, start int64) *child {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, fmt.Sprintf("SLUICE_CRASH_START=%d", start))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 1<<16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	return c
}

// runUntilKilled reads acks until the kill moment, kills the child with
// SIGKILL and returns every key it acknowledged.
func (c *child) runUntilKilled(t *testing.T, after time.Duration, acked map[int64]bool) {
	var deadline <-chan time.Time
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("child exited early: %v", c.cmd.Wait())
			}
			switch {
			case line == "READY":
				deadline = time.After(after)
			case strings.HasPrefix(line, "ACK "):
				k, _ := strconv.ParseInt(strings.TrimPrefix(line, "ACK "), 10, 64)
				acked[k] = true
			case strings.HasPrefix(line, "ERR "):
				t.Fatalf("child: %s", line)
			}
		case <-deadline:
			_ = c.cmd.Process.Signal(syscall.SIGKILL)
			_ = c.cmd.Wait()
			for line := range c.lines { // acks printed before the kill
				if strings.HasPrefix(line, "ACK ") {
					k, _ := strconv.ParseInt(strings.TrimPrefix(line, "ACK "), 10, 64)
					acked[k] = true
				}
			}
			return
		}
	}
}

func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("child process")
	}
	kills := 20
	if s := os.Getenv("SLUICE_CRASH_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	acked := map[int64]bool{}
	next := int64(1)
	for i := 0; i < kills; i++ {
		c := startChild(t, dir, next)
		after := time.Duration(50+rng.IntN(400)) * time.Millisecond
		c.runUntilKilled(t, after, acked)
		// The write in flight at the kill may or may not have landed: it
		// is the key after this child's last ack, or its first key if it
		// acked none (a child killed while its first write waited), and
		// no later child may write that key again.
		next = max(maxKey(acked)+2, next+1)
		verify(t, dir, acked, fmt.Sprintf("after kill %d (%d acked)", i+1, len(acked)))
	}
	t.Logf("%d kill points, %d acknowledged writes, none lost or duplicated", kills, len(acked))
}

func maxKey(m map[int64]bool) int64 {
	var mx int64
	for k := range m {
		mx = max(mx, k)
	}
	return mx
}

// verify opens the engine in this process, lets it recover, flushes and
// checks the workload's invariants.
func verify(t *testing.T, dir string, acked map[int64]bool, when string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(ctx, Options{Dir: dir, BarrierInterval: 10 * time.Millisecond, Parallelism: 2, ChunkSize: 64})
	if err != nil {
		t.Fatalf("%s: reopen: %v", when, err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Fatalf("%s: close: %v", when, err)
		}
	}()
	if _, ok := e.Catalog().ByName("j"); !ok {
		return // killed before setup finished; nothing acknowledged yet
	}
	if err := e.Flush(ctx); err != nil {
		t.Fatalf("%s: flush: %v", when, err)
	}
	if err := checkWorkload(ctx, e, acked); err != nil {
		t.Fatalf("%s: %v", when, err)
	}
}
