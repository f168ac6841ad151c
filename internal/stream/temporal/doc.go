// Package temporal holds the temporal filter: WHERE ts > now() - INTERVAL
// '1 hour' in a materialized view, whose now() is the time of the last
// barrier, so rows leave the view (or, with < and <=, enter it) as time
// passes, without any input.
//
// # Temporal filter, step by step
//
//  1. The bound is plan.TemporalFilter.Bound evaluated with now() the time
//     of the latest barrier. Rows arriving in an epoch are compared with
//     the bound of the barrier that opened it; no row arrives before the
//     first barrier. A NULL bound keeps no row.
//  2. A row on the kept side of the bound passes (an insert as an insert,
//     a delete as a delete; update pairs are split, since their halves may
//     fall on different sides). A row with a NULL time never passes.
//  3. The table keeps the rows that may still cross the bound: with > and
//     >=, the rows that passed (they expire); with < and <=, those that did
//     not (they arrive). Keyed by the time column first, so the rows that
//     cross when the bound moves are one range per owned vnode
//     (storage.StateTable.ScanBelow).
//  4. On a barrier the table is sealed and the barrier passed on; then
//     the bound moves to the barrier's time (never back), and the stored
//     rows that crossed are emitted, deletes of expired rows or inserts of
//     arrived ones, and removed from the table. The changes belong to the
//     epoch the barrier opens, so a rebuilt filter's first barrier still
//     comes first.
//
// Nothing in memory is needed after a restart: the table holds exactly
// the rows on the near side as of the last committed epoch, and the first
// barrier moves the bound past whatever crossed meanwhile. Watermarks are
// dropped: an expiring row goes out as a delete of an old row.
package temporal
