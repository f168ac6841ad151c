// Package mview holds the materialize executor, the root of every
// materialized view's (and table's) streaming job: it writes the stream
// into the state table that batch queries read as the view's contents.
//
// The flow, step by step:
//
//  1. Build validates the materialize node (the table's columns must be the
//     input's) and opens the view's state table for the actor's vnodes.
//  2. For each visible input row, in order, Materialize looks up the stored
//     row with the same primary key (through an optional LRU cache of
//     encoded PK → row, or "known absent"; the state table is the truth) and
//     applies the "overwrite" conflict rule:
//     - Insert of a new PK: store it, emit `+ new`.
//     - Insert of a stored PK: replace it, emit `U- stored`, `U+ new`.
//     - Delete of an absent PK: ignore it, emit nothing.
//     - Delete of a stored PK: remove it and emit `- stored` — the stored
//     row, not the one in the input, so downstream removes exactly what it
//     was told to add even when the input's row differs.
//     - An update pair that keeps the PK is an insert of the new row; one
//     that changes the PK is a delete of the old key then an insert.
//     The output is therefore a consistent change stream of the table, and
//     views on this view receive corrected changes.
//     For a materialized view (plan.Materialize.View) the input should
//     already be a consistent change stream of the view's key, so a delete
//     of an absent key, a delete whose row differs from the stored one and
//     an insert of a stored key are upstream bugs: each is still applied
//     as above but reported through stream.Env.OnInconsistentOp (the
//     engine's sluice_stream_inconsistent_ops_total, see consistency.go).
//     The checks compare the input with the stored row read anyway, so
//     they cost no extra state access. A table's materialize overwrites
//     on conflict by design and reports nothing.
//  3. Output rows are buffered per input chunk (at most twice its rows) and
//     returned in chunks of at most the configured size, never splitting an
//     update pair.
//  4. On a barrier the table is sealed for the barrier's epoch and the
//     barrier is passed on. When the store commits the epoch, the writes
//     are visible to batch queries; ScanAll reads a table's committed rows
//     through a store snapshot.
//
// Nothing in memory is needed for correctness: after recovery the executor
// is rebuilt on the same table (uncommitted writes discarded) with an empty
// cache.
package mview
