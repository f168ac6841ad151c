// Package window computes window functions (SELECT … f(…) OVER (…)) over
// one partition whose rows are already in window order. The batch
// executor calls it once per partition; the streaming over-window
// executor (internal/stream/overwindow) calls it for the rows a change
// can affect, which Reach bounds.
//
// Semantics follow Postgres:
//
//   - row_number, rank, dense_rank, percent_rank, cume_dist and ntile rank
//     a row within its partition; rows equal on every ORDER BY column are
//     peers and rank alike.
//   - lag and lead read the row a constant offset before or after,
//     or the default (NULL without one) past the partition's ends.
//   - first_value, last_value, nth_value and the aggregates (count, sum,
//     avg, min, max, bool_and, bool_or) read the row's frame. In ROWS mode
//     frame bounds count rows; in RANGE mode a CURRENT ROW bound takes in
//     the row's peers. The default frame is RANGE BETWEEN UNBOUNDED
//     PRECEDING AND CURRENT ROW, so without ORDER BY it is the whole
//     partition. An empty frame gives NULL (count: 0).
//
// Aggregates over consecutive frames that share their start extend the
// previous row's value instead of starting again, so running totals are
// linear in the partition; sliding frames are summed afresh per row,
// which is exact for floats as Postgres is (no inverse transition), and
// costs the frame's width per row.
package window
