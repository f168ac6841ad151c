// Package overtake keeps a paused or throttled job from holding the
// barriers every other job waits for. While the user has slowed a job
// (stream.Throttle.Slowed), a Gate at each input of the job's fragments
// takes the input first: chunks wait in its Queue, and a barrier passes at
// once, overtaking them. The queued chunks are the gate's state: at each
// barrier the ones not yet stored are written to the job's gate table
// (Table), the ones passed on since are deleted, and a restart reads them
// back, so RESUME goes on exactly where the job was, also after kill -9.
// Past a bound, stored chunks are dropped from memory and read back in
// turn, so a long pause of a job with a busy upstream cannot exhaust
// memory.
//
// A gate sits above a Merge (an exchange) or above a Backfill, never
// between a Backfill and its upstream: a backfill must see its upstream's
// changes in the epoch they were made. Executors that can work on one
// chunk for long (a join matching millions of rows to one input row) let
// barriers overtake their own work too (join/overtake.go).
package overtake
