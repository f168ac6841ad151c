package storage

import "time"

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
// it. A session writing one statement after another waits only when its
// client's round trip is shorter than the delay: at 150 us the
// UPDATE-by-key figure's p50 moved within its noise (0.42-0.48 ms either
// way), at 400 us it rose to 1.54 ms.

// DefaultCommitDelay is the longest a WAL sync waits after the previous
// one (Options.CommitDelay 0). With 16 clients of single-row INSERTs on 2
// cores (sluice-bench ingest, six alternating runs against the commit
// before), 150 us cut syncs from one per 4.4 statements to one per 8 and
// the p99 from 9-12 ms to 5-8 ms, and raised statements/s against
// Postgres from 0.53-0.72x to 0.60-0.78x; 400 us left the cores idle
// while clients waited (9 075-9 938 statements/s against 11 991-12 367).
const DefaultCommitDelay = 150 * time.Microsecond

// minSyncInterval is Pebble's WALMinSyncInterval for Options.CommitDelay
// d: 0 means DefaultCommitDelay, a negative d never waits (nil).
func minSyncInterval(d time.Duration) func() time.Duration {
	if d == 0 {
		d = DefaultCommitDelay
	}
	if d < 0 {
		return nil
	}
	return func() time.Duration { return d }
}
