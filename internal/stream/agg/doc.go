// Package agg holds the streaming aggregation executors: hash aggregation
// (GROUP BY), simple aggregation (no GROUP BY, exactly one output row),
// DISTINCT, and the local aggregation of two-phase aggregation (local.go:
// stateless, it pre-aggregates each chunk of an input that only inserts
// before the exchange; the hash aggregation adds up its partial counts,
// sum_counts, and takes the extreme of its partial extremes). Every
// aggregate is retractable: deletes and updates of earlier rows are folded
// in as exactly as inserts.
//
// # Aggregation, step by step
//
//  1. Build validates the node: argument columns, each call's result type
//     against Postgres's (count → bigint; sum(int2/int4) → bigint,
//     sum(int8/numeric) → numeric, sum(float) → same float; avg(int,
//     numeric) → numeric, avg(float) → double; min/max → the argument's
//     type), FILTER expressions (boolean), and every state table's shape
//     against ResultLayout / CallLayout.
//  2. For each input chunk, every call's FILTER is evaluated over the chunk
//     with the actor's non-strict expr.Context: a row error is NULL, so the
//     row is not counted by that call. Then each visible row finds its
//     group (below) and adds +1 (Insert, U+) or -1 (Delete, U-) to the
//     group's row count and to each call whose filter passed and whose
//     argument is not NULL.
//  3. Running calls fold the value into a runState of counts and sums:
//     count and count(*) a count; sum and avg a count of non-NULL inputs
//     plus a sum (a 128-bit integer for integer inputs, so sum(int8) is an
//     exact numeric and never overflows; float64 or apd numeric otherwise,
//     with NaN, +Inf and -Inf counted apart because they cannot be
//     subtracted back out); bool_and / bool_or counts of trues and falses.
//     A sum or avg is NULL while its count is zero.
//  4. Table-backed calls (min, max, string_agg, and every DISTINCT call)
//     keep a multiset of their inputs in AggCall.Table: one row per (group
//     keys, value columns) with a multiplicity, deleted when it reaches
//     zero. min is the first row of a prefix scan on the group key, max the
//     same with the value ordered DESC, so deleting the current min finds
//     the next one. string_agg stores (ORDER BY columns, value, delimiter)
//     and concatenates a prefix scan. A DISTINCT count/sum/avg/bool call
//     is also running: the multiset tells when a value enters (0→1) or
//     leaves (1→0) the group's distinct set, and only then is it folded.
//     A min or max value inserted into a group new this epoch waits on
//     the group and is written at the flush, counted, as a fresh row
//     (pending.go; scans merge such rows until they commit, waited.go).
//  5. Finding a group: the epoch's dirty groups (every group touched since
//     the last barrier, held until the flush), then the LRU cache of clean
//     groups (env.CacheOrDefault() groups), then Agg.ResultTable, unless
//     the groups are complete (complete.go). A group not in the table
//     starts empty. Only groups whose rows a flush wrote enter the LRU,
//     when the epoch ends. The indexes are keyed by the group key's value
//     encoding, written straight from the chunk's columns, when every key
//     type's value encoding is canonical (integers, bool, text, bytea,
//     date/time types), else by its memcomparable key (groupkey.go); dirty
//     groups keyed by one or two integer-backed columns without a NULL are
//     keyed by the values themselves (groupints.go). A found group costs
//     no allocation.
//  6. On a barrier, the dirty groups are finished in the order they were
//     first touched: outputs are computed (running states directly,
//     table-backed calls by a prefix scan), the result row is written, and
//     the change is emitted: + for a new group, U-/U+ when the output
//     changed, - for a group whose row count fell to zero (its result row
//     is deleted), nothing when the output is unchanged. Output chunks hold
//     at most env.ChunkSizeOrDefault() rows and never split an update pair;
//     each Next returns one, so the epoch's output is produced lazily. Then
//     every table is sealed for the epoch and the barrier is returned.
//     Emitting per epoch rather than per chunk means a group changed many
//     times in an epoch emits once; the dirty set is bounded by the epoch's
//     distinct groups. The flush reuses its scratch: a group computes its
//     output into a spare row that swaps with the previous output when
//     they differ, and the state blobs handed to the result table are
//     carved from shared arenas.
//  7. Simple aggregation is the same with an empty group key, except that
//     its single group never disappears: on the first barrier it is loaded
//     from (or, if absent, created in) the result table and, if new, its
//     initial row (count 0, other aggregates NULL) is emitted as an Insert.
//
// # Result table layout (ResultLayout)
//
//	group keys… | one column per call (the output last emitted) | rows bigint | states bytea
//
// PK = the group keys (none for simple aggregation: one row in vnode 0).
// "states" is codec.EncodeValue of the running calls' states, in call
// order, each as the 10 columns of stateTypes (n, sum hi, sum lo, float
// sum, numeric sum, NaN, +Inf, -Inf, trues, falses). The output columns let
// a reloaded group emit the right U- without recomputing the old value.
//
// # Watermarks
//
// A watermark on the input column of group key j goes out as one on
// output column j, after the epoch's changes and before the barrier: the
// changes of groups below it are all out by then. The first group key
// (the planner puts a watermarked key first) also closes groups: at each
// barrier the groups below the watermark of the previous barrier are
// final, and their rows in every state table are deleted (ScanBelow, one
// range per owned vnode; value rows written fresh are met once they
// commit). So a windowed aggregation keeps only its open windows. Within
// an epoch, a watermark that closes dirty groups of an aggregation without
// value tables finishes them at once (early.go): their final output goes
// out before the barrier and their memory is free, rather than every
// window of the epoch waiting for its flush.
//
// With EMIT ON WINDOW CLOSE (plan.Agg.EmitOnWindowClose) the flush emits
// nothing for the dirty groups; after them it emits each group below the
// current watermark once, as an insert of its final output, and deletes
// its result row in the same epoch, so a rebuilt actor that sees the
// watermark again does not emit it twice. The output is append-only.
//
// # Recovery
//
// Nothing in memory is needed for correctness: after a rebuild the cache is
// empty and every group is read back from the committed tables, whose
// result rows, multisets and running states were all written before the
// barrier that sealed them.
//
// # Distinct
//
// Distinct counts each key's rows in Distinct.Table (DistinctLayout: key
// columns, then a bigint count; PK = the keys) behind an LRU of counts, and
// emits per chunk: + on 0→1, - on 1→0. An update pair that keeps its key
// is dropped whole.
//
// # Known approximations
//
// A float sum under retractions accumulates rounding error (as in every
// incremental engine). A numeric sum keeps the largest scale it has seen
// (1.50 + 2 - 1.50 shows 2.00, where a from-scratch sum shows 2). A
// sum(int2/int4) outside bigint reads NULL where Postgres would error.
// Values a key cannot tell apart (numeric 1.0 and 1.00, float -0 and 0)
// share one multiset row, so min/max/string_agg show whichever spelling
// was stored first.
package agg
