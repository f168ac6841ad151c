// Package topn is the streaming top-N executor (plan.KindTopN): per group of
// GroupKeys, the output is the rows ranked Offset+1 … Offset+Limit by
// OrderBy (Limit < 0: every row from Offset+1 on; WithTies: plus every row
// tied with the last one on all ORDER BY columns). It covers ORDER BY …
// LIMIT … OFFSET …, FETCH … WITH TIES and ROW_NUMBER() OVER (PARTITION BY
// …) <= N.
//
// # Order
//
// Ranks are total: rows are ordered by the ORDER BY columns (direction and
// NULL placement per codec.Order) and then by the input's stream key, so
// equal ORDER BY values rank deterministically. Concretely, a row's sort key
// is the memcomparable encoding (codec.EncodeKey) of the state table's PK
// after the group columns, and ranks are sort keys compared as strings.
//
// # State layout
//
// TopN.Table holds every input row of every group, whole (its value is the
// row), keyed by
//
//	PK = group keys | ORDER BY columns (with their codec.Order) | stream key
//
// so a prefix scan over a group's keys returns its rows in rank order, and
// the sort key (the PK after the group) identifies a row within its group.
// The distribution key must be among the group keys (Build checks), so a
// group lives in one vnode and the prefix scan is one ordered range. Nothing
// else is stored: after recovery the output as of the committed epoch is by
// definition the top-N of the committed rows, and caches rebuild from scans.
//
// # Caches
//
// Each group's cache (groupCache) holds an exact prefix of the group's rows
// in rank order, like RisingWave's three caches laid end to end:
//
//	ranks [0, Offset)                     low: skipped rows
//	ranks [Offset, Offset+Limit) + peers  middle: the output window
//	up to `high` rows beyond              high: the next rows to pull in
//
// plus a flag saying whether the prefix is the whole group. The prefix stays
// exact because every write updates it when the row falls inside it, and a
// row beyond it is simply not cached. When a delete leaves the prefix too
// short to tell the window, it is refilled by rescanning the group (at least
// doubling what it asks for, so refills cost O(rows cached) amortized).
// After each chunk a touched group's cache is trimmed back to low + middle +
// high. Groups' caches sit in an LRU sized so that about Env.CacheEntries
// rows are cached; an evicted group is reloaded on its next touch. With
// high = 0 and one cached group the executor is still correct, only slower.
//
// # Flow of a chunk
//
//  1. For each row, find its group. On a group's first touch in the chunk,
//     load its cache if needed and compute its window before the chunk: the
//     sort keys [lo, hi] of its first and last output row (window.go).
//  2. Note what the row's key was before the chunk (in the window, and with
//     what content), then write the row to the table and to the cache.
//  3. After the whole chunk, compute each touched group's window after it.
//     Sort keys of rows the chunk did not touch do not move, so such a row's
//     membership can change only if it lies between the old and new lo, or
//     between the old and new hi. The diff (delta.go) visits just the rows
//     the chunk touched and the rows in those spans: a row that enters is
//     `+`, one that leaves is `-`, a row whose content changed while staying
//     in is a U-/U+ pair. An insert ahead of the window thus yields `-` of
//     the row pushed out and `+` of the new one; a delete inside it yields
//     `-` and `+` of the row pulled in from beyond. An update that moves a
//     row across the boundary is just a delete and an insert of two keys.
//  4. Emit every delete (and update pair) of the chunk before any insert,
//     so a row that moves between groups (same stream key) is retracted
//     downstream before it is added again.
//
// Output is emitted right after each input chunk, not at barriers: the
// diff of one chunk is bounded by the chunk's size plus the peers of the
// last row (WITH TIES), and a barrier finds nothing buffered, so it only
// seals the table and passes on. Watermarks are dropped: a delete can pull
// a row below the watermark back into the output.
package topn
