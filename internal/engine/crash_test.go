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
// re-executed, see crash_child_test.go) with concurrent writers inserting,
// updating and deleting, now and then in a transaction over both tables
// (some of thousands of rows, one synced batch), kills it with SIGKILL at a random moment — most
// during the load, some during the restart's recovery, before the child
// is ready — and after each kill recovers the data directory in this
// process and checks it against the model of every acknowledged statement
// (crash_track_test.go): no acknowledged change lost, none applied twice,
// each writer's statement in flight applied wholly or not at all, and
// every view equal to a recomputation from its inputs.
//
// SIGKILL ends the process, not the machine: the page cache survives, so
// this test checks that an acknowledged write is in the log and that
// recovery replays it exactly once, not that the log is fsynced.

// child is one run of the child process.
type child struct {
	cmd   *exec.Cmd
	lines chan string
}

func startChild(t *testing.T, dir string, run int) *child {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	// A data race the child's load finds must fail the test: it halts the
	// child at once, which then exits early.
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, fmt.Sprintf("%s=%d", crashRunEnv, run),
		"GORACE="+os.Getenv("GORACE")+" halt_on_error=1")
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
		r := bufio.NewReaderSize(out, 64<<10)
		for {
			// A line the kill cut short (a long statement's write is not
			// atomic) is dropped: its print never returned, so its Write
			// never started.
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			c.lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	return c
}

// killPoint is when to kill a child: after a delay counted from its
// OPEN (during startup and recovery) or from its READY (under load).
type killPoint struct {
	startup bool
	after   time.Duration
}

// killed is what happened in one child's life.
type killed struct {
	ready     bool // the child reached READY before the kill
	recovered bool // its Open (the recovery) returned before the kill
	// OPEN to OPENED and to READY, when it got there.
	openTook, readyTook time.Duration
	acks                int
}

// runUntilKilled feeds the child's lines to the tracker until the kill
// point, kills the child with SIGKILL, and feeds it every line the child
// wrote before it died.
func (c *child) runUntilKilled(t *testing.T, tr *tracker, kp killPoint) killed {
	var res killed
	var deadline <-chan time.Time
	var opened time.Time
	take := func(line string) {
		switch {
		case line == "OPEN":
			opened = time.Now()
			if kp.startup {
				deadline = time.After(kp.after)
			}
		case line == "OPENED":
			res.recovered, res.openTook = true, time.Since(opened)
		case line == "READY":
			res.ready, res.readyTook = true, time.Since(opened)
			if !kp.startup {
				deadline = time.After(kp.after)
			}
		case strings.HasPrefix(line, "A "):
			res.acks++
		}
		if err := tr.line(line); err != nil {
			_ = c.cmd.Process.Kill()
			t.Fatal(err)
		}
	}
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("child exited early: %v", c.cmd.Wait())
			}
			take(line)
		case <-deadline:
			_ = c.cmd.Process.Signal(syscall.SIGKILL)
			_ = c.cmd.Wait()
			for line := range c.lines {
				take(line)
			}
			return res
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
	tr := newTracker()
	// How long a child's Open (the recovery) and its whole startup take,
	// refined by each child that gets ready.
	openTook, readyTook := 200*time.Millisecond, 600*time.Millisecond
	var inRecovery, duringLoad int
	for i := range kills {
		// The first child must finish the setup; after that about one kill
		// in four lands in a child's startup: half of those in its Open,
		// which recovers, half in the rest (the replay of the log's tail
		// that the startup's flush waits for).
		kp := killPoint{after: time.Duration(20+rng.IntN(580)) * time.Millisecond}
		if i > 0 && rng.IntN(4) == 0 {
			lo, hi := time.Duration(0), openTook
			if rng.IntN(2) == 0 {
				lo, hi = openTook, max(readyTook, openTook+time.Millisecond)
			}
			kp = killPoint{startup: true, after: lo + time.Duration(rng.Int64N(int64(hi-lo)))}
		}
		res := startChild(t, dir, i).runUntilKilled(t, tr, kp)
		where := killedWhere(kp, res)
		if res.ready {
			openTook, readyTook = res.openTook, res.readyTook
			duringLoad++
		} else {
			inRecovery++
		}
		notes := verify(t, dir, tr, fmt.Sprintf("after kill %d (%s)", i+1, where))
		t.Logf("kill %2d %s: %d statements acknowledged; in flight: %s", i+1, where, res.acks, strings.Join(notes, ", "))
	}
	m := tr.total()
	t.Logf("%d kill points (%d under load, %d in startup/recovery); %d statements with %d row changes acknowledged %v; "+
		"in flight at a kill: %d applied, %d not applied, %d either (same rows); final t %d rows, u %d rows; lost 0, duplicated 0",
		kills, duringLoad, inRecovery, tr.stmts, tr.rows, tr.byKind, tr.resolved["applied"], tr.resolved["not applied"],
		tr.resolved["either"], len(m.t), len(m.u))
}

func killedWhere(kp killPoint, res killed) string {
	after := kp.after.Round(time.Millisecond)
	switch {
	case !kp.startup:
		return fmt.Sprintf("under load, %v after READY", after)
	case res.ready:
		return fmt.Sprintf("under load, just after READY (%v after OPEN)", after)
	case res.recovered:
		return fmt.Sprintf("in startup after recovery, %v after OPEN", after)
	}
	return fmt.Sprintf("in recovery (Open), %v after OPEN", after)
}

// verify opens the engine in this process, lets it recover, flushes, and
// checks the tables against the tracker's model (resolving statements in
// flight) and the views against a recomputation.
func verify(t *testing.T, dir string, tr *tracker, when string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(ctx, crashOptions(dir))
	if err != nil {
		t.Fatalf("%s: reopen: %v", when, err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Fatalf("%s: close: %v", when, err)
		}
	}()
	if _, ok := e.Catalog().ByName("j"); !ok {
		if tr.stmts > 0 || tr.hasInflight() {
			t.Fatalf("%s: the workload's views are gone", when)
		}
		return nil // killed before the setup finished
	}
	if err := e.Flush(ctx); err != nil {
		t.Fatalf("%s: flush: %v", when, err)
	}
	tRows, uRows, err := scanWorkload(ctx, e)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	notes, err := tr.resolve(observe(tRows, uRows))
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if err := checkViews(ctx, e); err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	return notes
}
