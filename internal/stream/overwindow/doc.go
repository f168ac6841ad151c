// Package overwindow maintains window functions (f(…) OVER (PARTITION BY
// … ORDER BY …)) over a changing input: plan.OverWindow appends each
// call's value to every input row.
//
// State. The table holds the input rows keyed by (partition, order-by
// columns, the input's stream key) and spread by the partition, so one
// actor owns a partition and a prefix scan returns it in window order. A
// touched partition is loaded whole into an LRU cache of partitions, with
// every row's current values; a partition larger than the cache's row
// budget is dropped from the cache after the chunk that loaded it.
//
// Changes. For each input chunk, every touched partition applies its
// inserts and deletes to the table and to the cached rows, remembering
// the values of the rows it removed. The changes lie between two
// positions lo and hi of the partition after them; window.Reach bounds
// which rows around them can see other values (a running sum: every row
// after; ROWS 10 PRECEDING: ten rows after; percent_rank: all). Those rows
// are evaluated again and compared with what was emitted: a row whose
// values (or, re-inserted, contents) changed is an update pair, a removed
// row a delete of what it was, a new row an insert. Output follows each
// input chunk, deletes and update pairs before inserts, as top-N does.
//
// Watermarks are dropped: a late change can alter the values of rows far
// behind any watermark (a running total), so none holds for the output.
package overwindow
