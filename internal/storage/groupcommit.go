package storage

import (
	"sync/atomic"
	"time"
)

// Group commit. Every acknowledged write waits for a WAL sync, and on the
// machines measured one write plus fdatasync costs 50-130 us of CPU,
// more than the rest of a single-row INSERT. Pebble syncs as soon as one
// writer waits, so under many concurrent writers each sync covered only
// the few batches that arrived during the one before (sluice-bench
// ingest's INSERT figure under strace: one sync per 4.4 statements,
// against Postgres's one per 9.7).
//
// Like Postgres's commit_delay, the store makes a WAL sync that follows
// another within CommitDelay wait until CommitDelay has passed since it
// (Pebble's WALMinSyncInterval), so the writes arriving meanwhile share
// it. That was thought to cost a lone session nothing unless its round
// trip was shorter than the delay (the UPDATE-by-key figure's p50 moved
// within its noise at 150 us, and rose to 1.54 ms at 400 us). But a
// single client of INSERTs paid it on every statement (see
// commitSiblings below), so the delay now needs company.

// DefaultCommitDelay is the longest a WAL sync waits after the previous
// one (Options.CommitDelay 0). With 16 clients of single-row INSERTs on 2
// cores (sluice-bench ingest, six alternating runs against the commit
// before), 150 us cut syncs from one per 4.4 statements to one per 8 and
// the p99 from 9-12 ms to 5-8 ms, and raised statements/s against
// Postgres from 0.53-0.72x to 0.60-0.78x; 400 us left the cores idle
// while clients waited (9 075-9 938 statements/s against 11 991-12 367).
const DefaultCommitDelay = 150 * time.Microsecond

// The delay only pays when other writers can share the sync. A lone
// session writing one statement after another waited for it on every
// statement: a single pgbench client's INSERT (-M prepared) took 0.63-0.70
// ms, 0.33 ms with no delay (Postgres: 0.22 ms). Like Postgres's
// commit_siblings, the delay now applies only while at least
// commitSiblings other DML writers are in flight (in WriteDMLBatch).
// sluice-bench ingest -clients 1: 1 808 -> 3 006 statements/s, p50 0.38
// -> 0.30 ms; at 16 clients the figure stayed within its noise (0.78-0.88x
// Postgres before, 0.73-0.82x after, four runs each).
const commitSiblings = 1

// dmlWriters counts the DML writers in flight: those in WriteDMLBatch.
type dmlWriters struct{ n atomic.Int64 }

// enter counts a writer in until the returned func is called.
func (w *dmlWriters) enter() func() {
	w.n.Add(1)
	return func() { w.n.Add(-1) }
}

// minSyncInterval is Pebble's WALMinSyncInterval for Options.CommitDelay
// d: 0 means DefaultCommitDelay, a negative d never waits (nil). It is d
// while writers has siblings for the writer asking, else 0.
func minSyncInterval(d time.Duration, writers *dmlWriters) func() time.Duration {
	if d == 0 {
		d = DefaultCommitDelay
	}
	if d < 0 {
		return nil
	}
	return func() time.Duration {
		if writers.n.Load() > commitSiblings {
			return d
		}
		return 0
	}
}
