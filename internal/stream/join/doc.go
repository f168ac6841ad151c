// Package join implements the streaming hash join (plan.KindHashJoin):
// inner, left, right and full outer joins on equi keys (each optionally
// NULL-safe) plus an optional residual condition over the concatenated row
// (left columns then right), correct under deletes and updates.
//
// The flow, step by step:
//
//  1. Build validates the node (keys, tables, output, residual) into a
//     spec and opens each side's state table: the side's whole input rows
//     keyed by (join key, stream key) and distributed by the join key, so
//     every row of one key lives in one vnode and one prefix scan finds
//     them. An outer side (left for LEFT, right for RIGHT, both for FULL)
//     also opens a degree table: per stored row, its PK then its number of
//     matches.
//  2. The first Next starts stream.Aligned over the two inputs (0 = left,
//     1 = right); barriers come out aligned.
//  3. Each visible input row becomes a rowTask. U-/U+ are handled as a
//     delete then an insert, because the two halves may have different
//     keys and so different matches. The row's key is probed against the
//     other side: a NULL in a key that is not NULL-safe matches nothing, so
//     the probe is skipped (and the row is never stored, since its padded
//     output needs no state to retract).
//  4. The probe reads the other side's rows of that key from its LRU cache
//     (join key → rows in PK order, filled from the state table on a miss)
//     in batches of a chunk's size, and evaluates the residual over each
//     batch at once. A pair matches only if the residual is TRUE; a row
//     error in the residual is NULL, so no match.
//  5. Each match emits the joined row with the input row's op. If the other
//     side is outer its row's degree moves: an insert taking it from 0 to 1
//     emits "- (NULLs, other)" before "+ (row, other)"; a delete taking it
//     from 1 to 0 emits "- (row, other)" then "+ (NULLs, other)". The new
//     degree is written through to the cache and the degree table.
//  6. When the probe ends, an outer input row with no match emits its
//     padded form ("+ (row, NULLs)" or its retraction), and the row is
//     stored in (or removed from) its own side's state with its degree,
//     written through to its cache entry if that key is cached.
//  7. Output goes through a chunk builder. A full chunk is returned at
//     once, and the rowTask (its candidate iterator, batch and position)
//     waits in the executor for the next Next call, so one row matching
//     millions of rows is emitted chunk by chunk and never held in memory.
//     Every pass of Next's loop checks ctx and does bounded work, so a
//     cancelled actor stops within one batch.
//     A cache entry is read in primary-key order: stores append, and the
//     entry is put in order before a probe reads it (a removal orders it
//     too, and then stores go in place until the next probe).
//  8. A key with more than largeKeyRows rows is not cached: its cache entry
//     becomes a "large" marker and probes stream the rows straight from the
//     state table, reading degrees with point lookups. A side stored far
//     more often than probed keeps no cache at all and streams every probe
//     the same way, until an epoch probes it often again (adapt.go).
//  9. At the end of each input chunk the partial output is flushed. On an
//     aligned barrier the output is flushed first, then expired rows are
//     deleted (expiry.go) and state below the key watermark cleaned, then
//     every state table is sealed for the epoch, then the barrier is
//     passed on.
//
// Nothing in memory is needed for correctness: the caches only mirror the
// state tables, so after recovery the executor is rebuilt on the committed
// state and continues. One exception within an epoch: an append-only side
// with an expiry keeps the epoch's new rows in a list that its seal, or
// any read of its table, writes out first (deferred.go), so rows that
// expire in the epoch they came in never reach the table; the seal makes
// the table whole before the epoch commits.
//
// # Watermarks
//
// An inner join tracks, per key pair, each side's latest watermark on its
// key column. Once both sides have one, the lesser is the join's
// watermark on that key: it goes out as a watermark on every output
// column that is the pair's left or right column (an output row's key is
// at least both sides' watermarks). On the first key pair (the planner
// puts a watermarked pair first) it also closes state: at the next
// barrier both sides' rows below it are deleted, with their cache
// entries, since no later row of either side can match or retract them;
// they are deleted by the keys the walk found them under
// (storage.StateTable.DeleteBetween).
// Outer joins drop watermarks: they keep unmatched rows to pad.
//
// # Overtaking
//
// While its job is paused or throttled the join reads its input before its
// work, so barriers overtake the row in progress and the input queued
// behind it; that work is checkpointed in the pending table and resumed
// exactly after a restart (overtake.go).
package join
