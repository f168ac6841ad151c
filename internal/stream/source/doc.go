// Package source holds the executors at the bottom of a table's streaming
// jobs: the table source, which turns a table's durable DML log into a
// stream, and the backfill, which starts a new job over an existing table.
//
// # DML payloads
//
// The SQL layer encodes a statement's rows with EncodeDML and appends them
// with store.AppendDML, which returns once the record is synced: that is
// when the statement is acknowledged. DecodeDML reads a payload back,
// rejecting any damage (checksummed, typed) with ErrCorruptDML. A table
// keyed by a hidden row id encodes with EncodeTableDML, which marks a
// record of plain inserts with consecutive new ids as a fresh run
// (dml_fresh.go); with plan.TableSource.FreshRows the source passes such
// rows on still encoded, as stream.FreshRows, in windows of their own.
//
// # Table source, step by step
//
//  1. On its first Next the source reads its position from its offset
//     table (OffsetTable's shape: split → last_seq, partial_rows). It
//     returns nothing before the first barrier of its inbox.
//  2. Each Next first takes a barrier waiting in env.Barriers. Otherwise
//     it cuts the next chunk from the log (store.ReadDML, read-ahead of a
//     few records, several small records coalesced, never more than
//     ChunkSize rows, an update pair never cut), waits for env.Throttle to
//     let its rows pass, and returns it. With nothing to read it blocks on
//     (barrier inbox, new records via store.WaitDML, ctx).
//  3. A barrier taken while the source runs unthrottled is held: the
//     source reads the log's durable mark (store.LastDML) at that moment and
//     returns every record up to it before the barrier. The mark only
//     grows, so every record under it when the barrier was injected is in
//     the barrier's epoch: that is what makes FLUSH (and implicit_flush)
//     read-your-writes, as long as AppendDML acknowledges a write only once
//     the mark covers its record. The target is fixed on arrival, so
//     records appended later may come after the barrier, and a steady
//     stream of DML cannot hold it forever; a backlog does delay it, by the
//     time to emit the backlog. A paused or rate-limited source passes the
//     barrier at once (also when paused while draining, and a throttle wait
//     is interrupted by a barrier): a paused source must never hold up a
//     checkpoint, and its records simply follow in a later epoch.
//  4. On a barrier it writes the position of everything it has returned —
//     the last whole record, plus the rows of a record cut by the barrier
//     — and seals the offset table with the barrier's epoch.
//
// Exactly once: the rows returned before barrier E are exactly the log
// between the positions sealed at the previous barrier and at E, and the
// position sealed at E commits atomically with everything downstream
// derived from those rows. Recovery rebuilds the source on the committed
// state, so it resumes after the last committed position: a row is in a
// committed epoch once, or in none and replayed. TruncateCommitted, called
// by the engine after a commit, deletes the records every split has
// consumed as of the committed epoch.
//
// # Backfill, step by step
//
// The input is the upstream table's change stream (its materialize's
// output, no-shuffle: this actor owns the same vnodes), whose first message
// is the barrier that added the job. Data after barrier E belongs to epoch
// E+1; the upstream table's state "as of E" (S_E) includes every change
// before barrier E.
//
//  1. On its first Next the backfill loads its per-vnode progress from
//     ProgressTable (position = memcomparable key of the last row scanned,
//     finished, rows scanned) and starts a goroutine pulling the input.
//  2. After passing a checkpoint barrier E it waits — without ever
//     blocking the upstream — until the store commits E, and then opens a
//     snapshot, which is at exactly E: no later epoch can commit before
//     this actor passes the next barrier. (This is where Sluice differs from
//     RisingWave's no-shuffle backfill, which reads the upstream's
//     uncommitted state at E from its shared buffer; Sluice's uncommitted
//     state lives in the writer's overlay, so the scan reads committed data
//     and simply starts a little later in the epoch.)
//  3. Between barriers it alternates between scanning and the upstream when
//     both are ready (a barrier waits for at most one scan chunk; a busy
//     upstream does not starve the scan). A scan step reads the snapshot
//     after each vnode's position (storage.Snapshot.ScanFrom), at most one
//     chunk, applying env.Throttle; the rows are inserts.
//  4. An upstream change to key k in vnode v is forwarded if the scan has
//     passed k (k ≤ pos[v], or v finished) and dropped otherwise. A dropped
//     change sets v's fence to min(fence, k): the scan must not emit a row
//     at or beyond the fence in this epoch, and v cannot finish in this
//     epoch. When the scan exhausts a vnode without a fence, the vnode is
//     finished.
//  5. On a barrier it writes the dirty progress rows, seals, forgets the
//     fences and closes the snapshot. Once every owned vnode is finished it
//     forwards every change (projected) and stops scanning.
//
// # Why there is no gap and no duplicate
//
// Invariant: after barrier E, the backfill's cumulative output, applied to
// an empty table, equals S_E restricted to the keys covered by the
// positions sealed at E (all of them once finished). It holds at the first
// barrier (nothing covered) and after recovery (the committed output and
// positions are of the same epoch, and the upstream resumes from it).
// Inductively, during epoch E+1:
//
//   - A key covered at E stays covered; every change to it in E+1 is
//     forwarded, in order, so its output goes from S_E(k) to S_{E+1}(k).
//   - A key k the scan emits in E+1 comes from the snapshot at E, so it
//     emits S_E(k). Any change to k in E+1 that arrived before the scan
//     reached k was dropped and fenced the scan at or before k — so the scan
//     would not have emitted k. Hence no such change exists; every change to
//     k in E+1 arrives after k is covered and is forwarded: the output
//     reaches S_{E+1}(k). No snapshot row is emitted twice: positions only
//     grow, and ScanFrom resumes strictly after the position.
//   - A key neither covered nor scanned has all its changes dropped and no
//     output; it is not covered at E+1 either.
//   - A vnode finishes only when the snapshot at E has no row past its
//     position and no change beyond the position was dropped in E+1: then
//     every key of the vnode in S_{E+1} is either covered or was inserted
//     by a forwarded change.
//
// Epochs without a scan (a non-checkpoint barrier never commits alone, or
// the commit comes late) keep the invariant trivially: nothing is scanned,
// covered keys are forwarded, the rest dropped. The property test
// (TestBackfillNoGapNoDuplicateProperty) checks the claim against a model,
// with crashes, skipped commits and three key layouts; run it harder with
// -rapid.checks=2000.
//
// Progress (rows scanned, finished) is readable from any goroutine through
// the Progress interface, for SHOW JOBS.
package source
