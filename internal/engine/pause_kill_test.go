//go:build unix

package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// A paused join's overtaken work survives kill -9 (issue 11): a child
// process pauses a counting self-join in the middle of its pairs, lets
// checkpoints commit the overtaken work, and is killed with SIGKILL.
// Recovered here, the job is still paused and still lets barriers pass;
// resumed, it ends with the exact count: nothing lost, nothing doubled.

const (
	pauseChildEnv = "SLUICE_PAUSE_CHILD_DIR"
	pauseRows     = 3000
)

func pauseOptions(dir string) Options {
	return Options{Dir: dir, BarrierInterval: stallInterval, Parallelism: 2, ChunkSize: 256, Logger: testLogger()}
}

func TestPausedJoinSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPauseKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), pauseChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := waitPaused(t, out)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	ctx := context.Background()
	e, err := Open(ctx, pauseOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}()
	if rel, ok := e.Catalog().ByName("pairs"); !ok || !rel.Job.Control.Paused {
		t.Fatalf("pairs after the restart: %+v, want paused", rel)
	}
	status := func() uint64 {
		st, err := e.Coordinator().Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Barrier.Committed
	}
	later := status() + 5
	waitFor(t, "barriers to commit while pairs is paused", func() bool { return status() >= later })
	if got := viewCount(t, e, "pairs"); got >= pauseRows*pauseRows || got < paused {
		t.Fatalf("pairs = %d after the restart, paused at %d of %d", got, paused, pauseRows*pauseRows)
	}
	if err := e.SetPaused(ctx, "pairs", false); err != nil {
		t.Fatal(err)
	}
	within(t, 3*time.Minute, "the join to finish", func() bool { return viewCount(t, e, "pairs") >= pauseRows*pauseRows })
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := viewCount(t, e, "pairs"); got != pauseRows*pauseRows {
		t.Fatalf("pairs = %d after resume, want %d (paused at %d before the kill)", got, pauseRows*pauseRows, paused)
	}
	t.Logf("killed while paused at %d of %d pairs; exact after resume", paused, pauseRows*pauseRows)
}

// waitPaused reads the child's lines until it says PAUSED, and returns
// the count it saw.
func waitPaused(t *testing.T, out interface{ Read([]byte) (int, error) }) int64 {
	t.Helper()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		r := bufio.NewScanner(out)
		for r.Scan() {
			lines <- r.Text()
		}
	}()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the child ended before pausing")
			}
			var n int64
			if _, err := fmt.Sscanf(line, "PAUSED %d", &n); err == nil {
				return n
			}
			if strings.HasPrefix(line, "ERR") {
				t.Fatal(line)
			}
		case <-timeout:
			t.Fatal("the child did not pause within 2 minutes")
		}
	}
}

// TestPauseKillChild is the child's body; it only runs when re-executed.
func TestPauseKillChild(t *testing.T) {
	dir := os.Getenv(pauseChildEnv)
	if dir == "" {
		t.Skip("runs only as TestPausedJoinSurvivesKill's child process")
	}
	fail := func(what string, err error) {
		fmt.Printf("ERR %s: %v\n", what, err)
		os.Exit(3)
	}
	ctx := context.Background()
	e, err := Open(ctx, pauseOptions(dir))
	if err != nil {
		fail("open", err)
	}
	cols := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tbl, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: cols})
	if err != nil {
		fail("create table", err)
	}
	b := newBuilder(ctx, e)
	join := b.join(innerJoin, b.scan(tbl), b.scan(tbl), []int{0}, []int{0})
	if _, err := e.CreateMaterializedView(ctx, b.view("pairs", b.simpleAgg(join, countStar()), []string{"n"})); err != nil {
		fail("create view", err)
	}
	var rows strings.Builder
	for g := 1; g <= pauseRows; g++ {
		fmt.Fprintf(&rows, "+ 1 %d\n", g)
	}
	if err := e.Write(ctx, "t", types.MustParseChunk([]types.Type{types.TInt64, types.TInt64}, rows.String())); err != nil {
		fail("insert", err)
	}
	if err := pauseWhenHeld(ctx, e); err != nil {
		fail("pause", err)
	}
	got, err := e.Scan(ctx, "pairs")
	if err != nil || len(got) != 1 {
		fail("scan", fmt.Errorf("%v %v", got, err))
	}
	fmt.Printf("PAUSED %d\n", got[0][0])
	select {} // until killed
}

// pauseWhenHeld pauses pairs once the join holds a barrier, then waits
// for five more checkpoints, which store its overtaken work.
func pauseWhenHeld(ctx context.Context, e *Engine) error {
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := e.Coordinator().Status(ctx)
		if err != nil {
			return err
		}
		if st.Barrier.OldestInFlightAge > 2*stallInterval {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the join never held a barrier")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := e.SetPaused(ctx, "pairs", true); err != nil {
		return err
	}
	st, err := e.Coordinator().Status(ctx)
	if err != nil {
		return err
	}
	for target := st.Barrier.LastEpoch + 5; st.Barrier.Committed < target; time.Sleep(5 * time.Millisecond) {
		if st, err = e.Coordinator().Status(ctx); err != nil {
			return err
		}
	}
	return nil
}

// viewCount reads a one-row count view as committed, without a flush (0
// while it is empty).
func viewCount(t *testing.T, e *Engine, view string) int64 {
	t.Helper()
	got, err := e.Scan(context.Background(), view)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		return 0
	}
	return got[0][0].(int64)
}
