// Package stateless holds the streaming executors that keep no state
// across barriers: projection, filter, constant values and UNION ALL.
//
// The flow, step by step:
//
//  1. Build switches on the node kind, type-checks the node's expressions
//     against the input schema (expr.Build) and returns the executor; a
//     malformed node is an error, never a panic.
//  2. Project evaluates every expression once over the whole input chunk
//     (vectorized) and returns a chunk over the new columns that shares the
//     input's ops and visibility mask. A row error (division by zero,
//     overflow) becomes NULL and is counted by the actor's non-strict
//     expr.Context; the job never fails on one bad row.
//  3. Filter evaluates its condition over the whole chunk and hides the rows
//     where it is not TRUE (NULL counts as false) by setting a new
//     visibility mask; columns are never copied. An update pair of which only
//     one side survives is rewritten into a plain Delete or Insert in a new
//     ops slice, because a dispatcher may share the input chunk's slices
//     with other outputs.
//  4. Values is a source: it waits for the first barrier on the actor's
//     barrier inbox, returns it, then emits its rows as Inserts (in chunks
//     of at most the configured size); afterwards it only forwards barriers.
//  5. Union pulls its inputs through stream.Aligned (started lazily, on the
//     first Next, because the pumps need a context), forwards every chunk as
//     it comes, and returns each barrier once, after every input has
//     delivered all its data of that epoch. DISTINCT union is planned as
//     union + distinct, so union itself never deduplicates.
//
// Barriers pass through every executor here unchanged: none owns a state
// table, so there is nothing to seal.
package stateless
