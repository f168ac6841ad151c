// Package sink holds the executor at the root of a sink's job (CREATE
// SINK): it hands its input, chunk by chunk, to the actor's writer of the
// sink connector (connector.SinkWriter), and tells the writer each epoch's
// end before the barrier goes on to be collected, so an epoch's
// checkpoint completes only once the writer has taken all of its rows.
//
// A sink stores nothing of its own: what it has written is the output of
// the epochs its input committed, and after a recovery its input replays
// from the last committed epoch. A writer that must not write a row twice
// across a recovery (a transactional producer) will commit with the epoch;
// the blackhole connector, the only one yet, needs neither.
package sink
