// Package batch executes a planner's batch query (a logical plan.Node tree)
// over one committed snapshot of the store, the way Postgres runs a
// SELECT: expressions are strict, so a row error such as division by zero
// fails the whole query with its SQLSTATE.
//
// The flow of Run, step by step:
//
//  1. Run takes one storage.Snapshot for the whole query, so every
//     Backfill leaf (a table or view being read) sees the same committed
//     epoch and the results of a join or union are mutually consistent.
//  2. Each node runs push-style (exec.go): it produces compact chunks of at
//     most ChunkSize rows and hands them to its parent's emit function.
//     Scans, Values, Project, Filter and Union stream; HashJoin builds its
//     right side and streams its left; HashAgg, SimpleAgg, TopN and
//     Distinct collect their input, then emit. Every producer checks ctx
//     once per chunk, so a cancelled query stops within one chunk.
//  3. Expressions are built with expr.Build and evaluated chunk at a time
//     with a strict expr.Context (expr.NewStrictContext), so the first
//     failing visible row ends the query.
//  4. The final ORDER BY / LIMIT / OFFSET of the query (Query.OrderBy …)
//     are applied last: without ORDER BY rows stream straight to the
//     caller (LIMIT stops the producers early), with it they are sorted
//     (stably, NULL placement per column) first.
//  5. Only the visible columns (len(Query.Columns)) reach the caller's
//     row callback; hidden ORDER BY and key columns are cut off.
//
// Memory is bounded (mem.go): what operators keep counts against the
// query's limit and the server's shared pool. Before either runs out a
// sort writes sorted runs and merges them (spill.go), and aggregation,
// DISTINCT and hash joins write hash partitions and process each as an
// input of its own (partition.go, aggspill.go, distinct.go,
// joinspill.go); spill files live in Options.SpillDir and go when the
// query ends. What cannot be split fails with 53200.
//
// Aggregates follow internal/stream/agg's result types (sum(int8) and
// avg of integers are numeric; avg divides with numeric '/' so the scale
// matches Postgres), but overflow of a bigint sum is an error here, as it
// is in Postgres, where a streaming job reads NULL instead.
//
// internal/engine/refeval computes the same plans row by row; it is the
// oracle this package's tests compare against, never its implementation.
package batch
