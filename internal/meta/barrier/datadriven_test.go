package barrier

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestScripts runs testdata/*.txt. Each command feeds one event to the
// machine and prints what the event returned and every action from Ready.
// Regenerate expected output with: go test ./internal/meta/barrier -rewrite
func TestScripts(t *testing.T) {
	// Only the scripts: rapid keeps its failure files under testdata too.
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			h := &harness{base: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
			h.now = h.base
			datadriven.RunTest(t, path, h.run)
		})
	}
}

type harness struct {
	m    *Machine
	base time.Time
	now  time.Time
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && h.m == nil {
		d.Fatalf(t, "run `new` first")
	}
	var before string
	if h.m != nil {
		before = h.m.describe(h.base)
	}
	var out []string
	err := h.dispatch(t, d, &out)
	if err != nil {
		// An event that fails must leave no trace, not even an action.
		if after := h.m.describe(h.base); after != before {
			d.Fatalf(t, "error %v changed state:\nbefore:\n%s\nafter:\n%s", err, before, after)
		}
		out = append(out, "error: "+err.Error())
	}
	if ierr := h.m.checkInvariants(); ierr != nil {
		d.Fatalf(t, "invariant broken: %v\n%s", ierr, h.m.describe(h.base))
	}
	for _, a := range h.m.Ready() {
		out = append(out, a.String())
	}
	if len(out) == 0 {
		return "ok\n"
	}
	return strings.Join(out, "\n") + "\n"
}

// dispatch runs one command. Output lines other than actions go to out.
func (h *harness) dispatch(t *testing.T, d *datadriven.TestData, out *[]string) error {
	switch d.Cmd {
	case "new":
		h.handleNew(t, d)
	case "recovered":
		return h.m.RecoveryDone(h.now, parseJobs(t, d))
	case "tick":
		h.advance(t, d)
		h.m.Tick(h.now)
	case "advance":
		h.advance(t, d)
	case "request":
		reason := "flush"
		d.MaybeScanArgs(t, "reason", &reason)
		return h.printEpoch(out)(h.m.RequestBarrier(h.now, reason))
	case "add-job":
		return h.printEpoch(out)(h.m.AddJob(h.now, parseJob(t, d, d.CmdArgs)))
	case "collect":
		return h.handleCollect(t, d, out)
	case "commit-done":
		h.advance(t, d)
		return h.m.CommitDone(h.now, scanEpoch(t, d))
	case "commit-failed":
		return h.m.CommitFailed(scanEpoch(t, d), scanErr(t, d))
	case "fail":
		var a uint32
		d.ScanArgs(t, "a", &a)
		return h.m.ActorFailed(ActorID(a), scanErr(t, d))
	case "force-recovery":
		h.m.ForceRecovery(scanErr(t, d))
	case "drop":
		var job uint32
		d.ScanArgs(t, "job", &job)
		return h.m.DropActors(JobID(job), scanActors(t, d, d.CmdArgs, "actors"))
	case "stop":
		return h.printEpoch(out)(h.m.StopJobs(h.now, scanJobs(t, d)))
	case "reset":
		var job uint32
		d.ScanArgs(t, "job", &job)
		return h.m.ResetActors(JobID(job), scanActors(t, d, d.CmdArgs, "actors"))
	case "drop-jobs":
		h.dropJobs(t, d, out)
	case "status":
		*out = append(*out, h.m.Status(h.now).String())
	case "state":
		*out = append(*out, h.m.describe(h.base))
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return nil
}

func (h *harness) handleNew(t *testing.T, d *datadriven.TestData) {
	var cfg Config
	var committed uint64
	if d.HasArg("interval") {
		var s string
		d.ScanArgs(t, "interval", &s)
		cfg.Interval = parseDuration(t, d, s)
	}
	d.MaybeScanArgs(t, "max-inflight", &cfg.MaxInFlight)
	d.MaybeScanArgs(t, "checkpoint-every", &cfg.CheckpointEvery)
	d.MaybeScanArgs(t, "committed", &committed)
	h.m = New(cfg, committed)
}

// handleCollect: `collect e=2 a=(1,2,3)` collects epoch 2 from each actor in
// turn; an error for one actor is printed (and must have changed nothing)
// and the rest still run.
func (h *harness) handleCollect(t *testing.T, d *datadriven.TestData, out *[]string) error {
	e := scanEpoch(t, d)
	for _, a := range scanActors(t, d, d.CmdArgs, "a") {
		before := h.m.describe(h.base)
		if err := h.m.Collected(a, e); err != nil {
			if after := h.m.describe(h.base); after != before {
				d.Fatalf(t, "error %v changed state:\nbefore:\n%s\nafter:\n%s", err, before, after)
			}
			*out = append(*out, "error: "+err.Error())
		}
	}
	return nil
}

// advance moves the manual clock by the duration given as a bare argument
// (`tick 1000ms`), if any.
func (h *harness) advance(t *testing.T, d *datadriven.TestData) {
	for _, arg := range d.CmdArgs {
		if len(arg.Vals) == 0 {
			h.now = h.now.Add(parseDuration(t, d, arg.Key))
		}
	}
}

func (h *harness) printEpoch(out *[]string) func(uint64, error) error {
	return func(e uint64, err error) error {
		if err == nil {
			*out = append(*out, fmt.Sprintf("epoch=%d", e))
		}
		return err
	}
}

func parseDuration(t *testing.T, d *datadriven.TestData, s string) time.Duration {
	dur, err := time.ParseDuration(s)
	if err != nil {
		d.Fatalf(t, "bad duration %q: %v", s, err)
	}
	return dur
}

// parseJobs reads one job per input line: `job=1 actors=(1,2) sources=(1)`.
func parseJobs(t *testing.T, d *datadriven.TestData) []JobSpec {
	var jobs []JobSpec
	for _, line := range strings.Split(d.Input, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		_, args, err := datadriven.ParseLine("job " + line)
		if err != nil {
			d.Fatalf(t, "bad job line %q: %v", line, err)
		}
		jobs = append(jobs, parseJob(t, d, args))
	}
	return jobs
}

func parseJob(t *testing.T, d *datadriven.TestData, args []datadriven.CmdArg) JobSpec {
	spec := JobSpec{Actors: scanActors(t, d, args, "actors"), Sources: scanActors(t, d, args, "sources")}
	for _, arg := range args {
		if arg.Key == "job" {
			spec.ID = JobID(parseUint(t, d, arg.Vals[0]))
		}
	}
	return spec
}

func scanActors(t *testing.T, d *datadriven.TestData, args []datadriven.CmdArg, key string) []ActorID {
	var ids []ActorID
	for _, arg := range args {
		if arg.Key != key {
			continue
		}
		for _, v := range arg.Vals {
			ids = append(ids, ActorID(parseUint(t, d, v)))
		}
	}
	return ids
}

// scanJobs reads `jobs=(1,2)`.
func scanJobs(t *testing.T, d *datadriven.TestData) []JobID {
	var ids []JobID
	for _, a := range scanActors(t, d, d.CmdArgs, "jobs") {
		ids = append(ids, JobID(a))
	}
	return ids
}

func scanEpoch(t *testing.T, d *datadriven.TestData) uint64 {
	var e uint64
	d.ScanArgs(t, "e", &e)
	return e
}

func scanErr(t *testing.T, d *datadriven.TestData) error {
	msg := "boom"
	d.MaybeScanArgs(t, "err", &msg)
	return errors.New(msg)
}

func parseUint(t *testing.T, d *datadriven.TestData, s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		d.Fatalf(t, "bad id %q: %v", s, err)
	}
	return n
}
