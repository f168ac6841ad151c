package compute

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// TestDeployValuesIntoMaterialize runs a two-fragment job (values hash
// dispatched to two materialize actors) epoch by epoch: every actor
// collects every epoch, and the rows become visible exactly when the epoch
// they belong to commits.
func TestDeployValuesIntoMaterialize(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{ChunkSize: 4, ChannelCapacity: 2})
	rows := kvRows(50)
	table := kvTable(1000, 0)
	// Each materialize actor may write only its own vnodes (a stray row is
	// an error), so a complete table shows the hash dispatch routed every
	// row right — provided the rows fall on both actors' vnodes.
	if owners := ownersOf(rows, 0); owners[0] == 0 || owners[1] == 0 {
		t.Fatalf("test rows all fall on one actor: %v", owners)
	}
	d := valuesToMaterialize(1, rows, table)
	h.deploy(t, d)
	if got := h.node.JobActors(1); !slices.Equal(got, []stream.ActorID{100, 101, 102}) {
		t.Fatalf("JobActors = %v", got)
	}
	if got := h.node.Jobs(); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("Jobs = %v", got)
	}
	if _, done, running := h.node.JobProgress(1); !running || !done {
		t.Fatalf("a started job without backfill: running %v, done %v", running, done)
	}
	if _, _, running := h.node.JobProgress(99); running {
		t.Fatal("an unknown job reports running")
	}

	for epoch := uint64(1); epoch <= 4; epoch++ {
		h.inject(t, barrier(epoch), 100)
		h.waitCollected(t, epoch, 100, 101, 102)
		if err := h.store.Commit(ctx, epoch, nil); err != nil {
			t.Fatalf("commit %d: %v", epoch, err)
		}
		got := h.scan(t, table)
		switch {
		case epoch == 1 && len(got) != 0:
			// Values emits its rows after the first barrier: they belong
			// to epoch 2.
			t.Fatalf("after epoch 1 the table holds %d rows, want none", len(got))
		case epoch >= 2 && !slices.EqualFunc(got, rows, func(a, b types.Row) bool { return types.CompareRows(a, b) == 0 }):
			t.Fatalf("after epoch %d the table holds\n%s\nwant\n%s", epoch, formatRows(got), formatRows(rows))
		}
	}
	if f := h.ev.failures(); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
}

func TestPrepareRejectsWrongActorCount(t *testing.T) {
	h := newHarness(t, Config{})
	d := valuesToMaterialize(1, kvRows(3), kvTable(1000, 0))
	for _, ids := range [][]stream.ActorID{nil, {11}, {11, 12, 13}} {
		bad := Deployment{Job: d.Job, Actors: map[uint32][]stream.ActorID{11: {100}, 12: ids}}
		if _, err := h.node.Prepare(context.Background(), bad); err == nil {
			t.Fatalf("Prepare accepted %d actors for a fragment of parallelism 2", len(ids))
		}
	}
	if jobs := h.node.Jobs(); len(jobs) != 0 {
		t.Fatalf("rejected job left behind: %v", jobs)
	}
	// Nothing half-registered blocks the correct deployment.
	h.deploy(t, d)
	h.inject(t, barrier(1), 100)
	h.waitCollected(t, 1, 100, 101, 102)
}

func TestPrepareRejectsDispatchToUnknownFragment(t *testing.T) {
	h := newHarness(t, Config{})
	d := valuesToMaterialize(1, kvRows(3), kvTable(1000, 0))
	d.Job.Fragments[0].Outputs = append(d.Job.Fragments[0].Outputs, plan.Dispatch{Kind: plan.DispatchSimple, Downstream: 77})
	if _, err := h.node.Prepare(context.Background(), d); err == nil {
		t.Fatal("Prepare accepted a dispatch to an unknown fragment")
	}
	if jobs := h.node.Jobs(); len(jobs) != 0 {
		t.Fatalf("rejected job left behind: %v", jobs)
	}
	if err := h.node.Inject(barrier(1), []stream.ActorID{100}); err == nil {
		t.Fatal("an actor of the rejected job accepts barriers")
	}
}

func TestPrepareRejectsBadEdges(t *testing.T) {
	h := newHarness(t, Config{})
	cases := map[string]func(d Deployment){
		"simple dispatch to two actors": func(d Deployment) {
			d.Job.Fragments[0].Outputs[0] = plan.Dispatch{Kind: plan.DispatchSimple, Downstream: 12}
		},
		"no-shuffle to fewer actors": func(d Deployment) {
			d.Job.Fragments[0].Outputs[0] = plan.Dispatch{Kind: plan.DispatchNoShuffle, Downstream: 12}
			d.Job.Fragments[0].Parallelism = 3
			d.Job.Fragments[0].Singleton = false
			d.Actors[11] = []stream.ActorID{100, 103, 104}
		},
		"unknown dispatch kind": func(d Deployment) {
			d.Job.Fragments[0].Outputs[0].Kind = "scatter"
		},
		"upstream fragment not running": func(d Deployment) {
			d.Job.Upstreams = []plan.UpstreamEdge{{UpstreamFragment: 999, Downstream: 12, Kind: plan.DispatchNoShuffle}}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			d := valuesToMaterialize(1, kvRows(3), kvTable(1000, 0))
			mutate(d)
			_, err := h.node.Prepare(context.Background(), d)
			if err == nil {
				t.Fatal("Prepare accepted the deployment")
			}
			t.Logf("rejected: %v", err)
			if jobs := h.node.Jobs(); len(jobs) != 0 {
				t.Fatalf("rejected job left behind: %v", jobs)
			}
		})
	}
}

func TestPrepareTwiceIsErrJobDeployed(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{})
	d := valuesToMaterialize(1, kvRows(3), kvTable(1000, 0))
	if _, err := h.node.Prepare(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := h.node.Prepare(ctx, d); !errors.Is(err, ErrJobDeployed) {
		t.Fatalf("second Prepare (not started) = %v, want ErrJobDeployed", err)
	}
	if err := h.node.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := h.node.Prepare(ctx, d); !errors.Is(err, ErrJobDeployed) {
		t.Fatalf("Prepare of a running job = %v, want ErrJobDeployed", err)
	}
	// Start of a started job is a no-op, not a second set of actors.
	if err := h.node.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	h.inject(t, barrier(1), 100)
	h.waitCollected(t, 1, 100, 101, 102)
}

func TestStartUnknownJob(t *testing.T) {
	h := newHarness(t, Config{})
	if err := h.node.Start(context.Background(), 42); err == nil {
		t.Fatal("Start of an unknown job succeeded")
	}
}

// TestStartBuildErrorLeavesNothing: a plan the executors reject (the
// materialized table's columns do not match its input) fails Start, and
// no actor of the job keeps running or stays registered.
func TestStartBuildErrorLeavesNothing(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{})
	table := kvTable(1000, 0)
	table.Types = []types.Type{i64, types.TVarchar}
	d := valuesToMaterialize(1, kvRows(3), table)
	if _, err := h.node.Prepare(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := h.node.Start(ctx, 1); err == nil {
		t.Fatal("Start built a materialize whose table does not match its input")
	}
	if jobs := h.node.Jobs(); len(jobs) != 0 {
		t.Fatalf("failed job still registered: %v", jobs)
	}
	if err := h.node.Inject(barrier(1), []stream.ActorID{100}); err == nil {
		t.Fatal("an actor of the failed job accepts barriers")
	}
	// The job id is free again.
	h.deploy(t, valuesToMaterialize(1, kvRows(3), kvTable(1000, 0)))
}

func TestInjectUnknownActor(t *testing.T) {
	h := newHarness(t, Config{})
	if err := h.node.Inject(barrier(1), []stream.ActorID{5}); err == nil {
		t.Fatal("Inject into an unknown actor succeeded")
	}
}
