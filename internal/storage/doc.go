// Package storage is Sluice's state store: one Pebble database holding every
// stateful executor's tables, the durable DML logs, and a few system keys,
// with epoch-atomic commits and consistent snapshots for batch reads.
//
// Key space (keys.go): t|table|vnode|pk for state rows, d|table|seq for DML
// records, s|… for system keys (the committed-epoch marker, meta entries
// such as catalog blobs and source offsets, DML sequence marks).
//
// An epoch's writes, from Insert to synced commit:
//
//  1. An actor opens one StateTable per table it keeps (Store.OpenTable),
//     naming itself as owner and listing the vnodes it owns.
//  2. Insert/Delete/Update encode the PK into the full Pebble key and put
//     the row (or a tombstone) into the table's overlay (overlay.go): the
//     epoch's unsealed writes live in a hash map, with an ordered index
//     built only once a scan needs it. Nothing touches Pebble yet;
//     rewriting a key within an epoch only replaces the overlay value.
//  3. Get and Scan read the overlay first and committed Pebble data under
//     it (iter.go merges both in key order; tombstones hide rows), so an
//     actor always reads its own writes, sealed or not.
//  4. At a checkpoint barrier the actor calls Seal(epoch): every key written
//     since the last seal is encoded into one Pebble batch, handed to the
//     store as a staged batch under (epoch, owner, table), in key order,
//     and the writes become the overlay's sorted run for epoch. The run
//     stays readable; newer writes shadow it.
//  5. When the barrier manager has collected epoch from every actor it calls
//     Store.Commit(epoch, offsets): all staged batches with epoch ≤ e, the
//     staged meta writes, the source offsets and the committed-epoch marker
//     go into ONE Pebble batch committed with Sync. Either all of it is
//     durable after a crash or none of it is.
//  6. Only after the sync does CommittedEpoch advance (and WaitCommitted
//     callers wake). Each StateTable then lazily drops the runs whose epoch
//     is committed, whole, the next time its owner touches it (never while
//     one of its iterators is open), because Pebble now has them.
//
// The other way out of staging: DiscardActor drops one owner's staged
// batches (a dropped job's actors), AbortUncommitted drops all of them and
// makes open tables stale (recovery), and DropTableState discards a
// table's staged batches and range-deletes its keys, synced.
//
// Snapshot reads: Store.Snapshot pins a Pebble snapshot and reads the epoch
// marker from it, so a batch query that reads several tables through it sees
// one committed epoch, labelled correctly.
//
// Latest state (tail.go): each table's tail holds the writes of the DML
// records its committed state does not cover yet; LatestSnapshot overlays
// them on a Pebble snapshot, so statements read a table's latest state
// without waiting for a barrier. Records enter the tail as they are
// enqueued and leave it (PruneTail) once a commit covers them. A tail
// that grows past tailSpillBytes (a bulk statement) writes its tree to a
// run, an unlinked sstable read until the prune (tail_run.go).
//
// Durable DML (dml.go): WriteDMLBatch writes records (of one or several
// tables, one batch) under each table's next seq, applies them to the
// tails, and returns once they are synced; concurrent appenders share
// Pebble's WAL syncs. A durable watermark per table lets ReadDML and WaitDML tail
// the log in order without gaps. The committed epoch records the seq a
// table source reached (as a meta offset); TruncateDML deletes behind it.
//
// Bulk writes: a seal of many fresh rows, or of many keys no layer held
// (a value table's new keys), writes them to an sstable that the commit
// ingests ahead of the epoch's batch (ingest.go, ingest_items.go), and a DML
// record of a megabyte or more is kept in a file of its own that the
// log's key names (dml_segment.go), so neither goes through the WAL, a
// memtable, a flush and compactions. A table whose epoch runs late (a
// stall's output piling up) writes its fresh rows to such files as they
// come, merged in the background, so that the seal its barrier waits for
// writes little (preseal.go, preseal_merge.go).
//
// Concurrency: a StateTable belongs to its actor's goroutine. Store methods
// are safe for concurrent use; the shared bookkeeping lives in Store.mu and
// Commit is serialized by commitMu (DropTableState takes it too, so no
// in-flight commit can write a dropped table's staged rows back).
package storage
