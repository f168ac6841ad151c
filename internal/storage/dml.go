package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluice-db/sluice/internal/types"
)

// DMLRecord is one entry of a table's DML log.
type DMLRecord struct {
	Seq     uint64
	Payload []byte
	// Gated marks one table's part of a transaction across tables
	// (dml_gate.go).
	Gated bool
	// Checked says the payload's last four bytes were found to be the
	// CRC-32C of the rest as it was read from its segment
	// (dml_segment.go), so its reader need not check them again.
	Checked bool
	// Load, when set, makes this a load record (dml_load.go): no payload;
	// Load.File.Path is the file's path.
	Load *LoadRecord
}

// dmlLog keeps, per table, the next sequence number and the durable
// watermark: every record with seq ≤ durable is synced. Readers never look
// past the watermark, so a tailing source sees records in order and without
// gaps even though appenders sync concurrently.
type dmlLog struct {
	mu struct {
		sync.Mutex
		tables map[uint32]*dmlTable
	}
}

type dmlTable struct {
	next    uint64              // next seq to hand out (seqs start at 1)
	durable uint64              // all seqs ≤ durable are finished
	done    map[uint64]struct{} // finished seqs above durable
	changed chan struct{}       // closed and replaced when durable advances
	recent  recentDML           // the latest records, for ReadDML (dml_recent.go)
	gates   map[uint64]struct{} // gated seqs not truncated yet (dml_gate.go)
	// segments names the files of records kept out of the log, by seq
	// (dml_segment.go).
	segments map[uint64]string
}

func (l *dmlLog) init() { l.mu.tables = make(map[uint32]*dmlTable) }

// keyDMLHigh returns the system key holding the highest seq ever used by
// a table, so that sequence numbers are never reused after the log empties.
func keyDMLHigh(tableID uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{prefixSystem, 't'}, tableID)
}

// dmlTableLocked returns the table's log state, loading the last sequence
// number from Pebble on first use.
func (s *Store) dmlTableLocked(tableID uint32) (*dmlTable, error) {
	if t := s.dml.mu.tables[tableID]; t != nil {
		return t, nil
	}
	last, err := s.lastDMLSeq(tableID)
	if err != nil {
		return nil, err
	}
	gates, err := s.loadGates(tableID)
	if err != nil {
		return nil, err
	}
	segs, err := s.loadSegments(tableID)
	if err != nil {
		return nil, err
	}
	if err := s.sweepSegments(tableID, segs); err != nil {
		return nil, err
	}
	t := &dmlTable{next: last + 1, durable: last, done: map[uint64]struct{}{}, changed: make(chan struct{}), gates: gates, segments: segs}
	s.dml.mu.tables[tableID] = t
	return t, nil
}

// lastDMLSeq returns the highest seq ever used by the table: its last record
// or, if truncation emptied the log, the truncation mark.
func (s *Store) lastDMLSeq(tableID uint32) (uint64, error) {
	var last uint64
	v, closer, err := s.db.Get(keyDMLHigh(tableID))
	switch {
	case err == nil:
		last = binary.BigEndian.Uint64(v)
		closer.Close()
	case !errors.Is(err, pebble.ErrNotFound):
		return 0, fmt.Errorf("storage: read dml truncation mark: %w", err)
	}
	p := dmlPrefix(tableID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return 0, fmt.Errorf("storage: open dml log: %w", err)
	}
	defer it.Close()
	if it.Last() {
		last = max(last, dmlSeqOf(it.Key()))
	}
	if err := it.Error(); err != nil {
		return 0, fmt.Errorf("storage: open dml log: %w", err)
	}
	return last, nil
}

// AppendDML appends payload to the table's DML log and returns once it is
// synced (WriteDML without a tail).
func (s *Store) AppendDML(ctx context.Context, tableID uint32, payload []byte) (uint64, error) {
	return s.WriteDML(ctx, tableID, DMLWrite{Payload: payload})
}

// DMLWrite is one record to append to a table's DML log.
type DMLWrite struct {
	// Payload is the record. The log keeps it in memory for readers (not
	// a copy): it must not be changed once written.
	Payload []byte
	// Tail, when set, is the table's layout; Rows (every column) are then
	// applied to the table's tail (tail.go) as the record enters the log.
	Tail *TableDesc
	Rows *types.Chunk
	// Fresh says every row is a plain insert of a row id never used
	// (ApplyTail).
	Fresh bool
	// Encoded, when set, is Rows encoded inside Payload: a fresh run of
	// the tail keeps it instead of Rows (ApplyTailEncoded).
	Encoded *EncodedRows
	// Segment, when set, names a segment already holding the payload
	// (WriteSegment); Payload is then nil, and so are Rows and
	// Encoded.Buf: the tail reads the rows from the segment. The batch
	// takes the segment over, removing it if it fails before it is
	// enqueued.
	Segment string
	// LoadRows, for a Segment record with a Tail but no Rows and not
	// Fresh (a piece of a bulk statement into a table with a primary
	// key, or of an UPDATE or DELETE), decodes the rows from the segment
	// for the tail when the record enters the log: a statement's pieces
	// are decoded one at a time, never all together.
	LoadRows func() (*types.Chunk, error)
	// Run, when set, holds the record's rows already written to a run of
	// the store's (a transaction block's piece, OwnWrites.AddRun): the
	// tail takes a copy of it rather than decoding and writing them again.
	Run *RunKeys
	// Load, when set, makes the record a load record (dml_load.go, made by
	// LoadWrite): Segment then names its file, and Payload and Tail are
	// nil.
	Load *LoadRecord
	// Enqueued, when set, is called once the record is ordered behind
	// every earlier record of the log and, with Tail, visible to
	// LatestSnapshot — before it is synced. A writer that read the table
	// under a lock releases it here, so the next writer reads this write
	// and the two share one sync.
	Enqueued func()
}

// WriteDML appends w.Payload to the table's DML log and returns its seq
// once it is synced (WriteDMLBatch of one record).
func (s *Store) WriteDML(ctx context.Context, tableID uint32, w DMLWrite) (uint64, error) {
	seqs, err := s.WriteDMLBatch(ctx, []TableDMLWrite{{Table: tableID, DMLWrite: w}}, w.Enqueued)
	if err != nil {
		return 0, err
	}
	return seqs[0], nil
}

// TableDMLWrite is a DMLWrite to one table's log.
type TableDMLWrite struct {
	Table uint32
	DMLWrite
}

// WriteDMLBatch appends records to the logs of one or more tables in one
// synced Pebble batch, so a crash keeps all of them or none (a
// transaction's writes), and returns their seqs once they are synced.
// Concurrent appenders share fsyncs: each enqueues its batch into Pebble's
// commit pipeline in seq order under the log mutex, then waits for the sync
// outside it, so one WAL sync covers everyone queued behind it. enqueued
// (and no record's own Enqueued) is called once every record is in the
// pipeline and the tails.
//
// ctx is honoured only until the batch is enqueued (while the store
// stalls, it waits outside Pebble: stall.go). From then on it will be
// durable (a failed WAL sync stops Pebble), so WriteDMLBatch waits for the
// sync whatever ctx says: a durable write is never reported as failed.
func (s *Store) WriteDMLBatch(ctx context.Context, ws []TableDMLWrite, enqueued func()) ([]uint64, error) {
	defer s.writers.enter()()
	if err := ctx.Err(); err != nil {
		s.removeCallerSegments(ws)
		return nil, err
	}
	if err := checkLoadWrites(ws); err != nil {
		s.removeCallerSegments(ws)
		return nil, err
	}
	if err := s.disk.check(dmlAmplification * payloadBytes(ws)); err != nil {
		s.removeCallerSegments(ws)
		return nil, err
	}
	if err := s.stall.wait(ctx); err != nil { // before writing segments
		s.removeCallerSegments(ws)
		return nil, err
	}
	segs, err := s.writeSegments(ws)
	if err != nil {
		return nil, err
	}
	preps := s.prepareTails(ws)
	leave, err := s.enterAppend(ctx)
	if err != nil {
		s.removeSegments(segs)
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	s.dml.mu.Lock()
	count, err := s.acked.assignLocked(b)
	var seqs []uint64
	var tables []*dmlTable
	if err == nil {
		seqs, tables, err = s.enqueueDMLLocked(b, ws, segs, preps)
	}
	s.dml.mu.Unlock()
	leave()
	if err != nil {
		s.removeSegments(segs)
		return nil, err
	}
	// From here the records are in the pipeline: their segments are the
	// log's.
	if enqueued != nil {
		enqueued()
	}
	// The batch is in the pipeline; it must be waited for before Close.
	err = b.SyncWait()
	s.dml.mu.Lock()
	if err != nil {
		for _, t := range tables {
			t.recent.clear() // the failed records must not be read
		}
	}
	// Finish the seqs even on error: a failed record is simply absent, and
	// the watermark must not stall behind it. A synced batch finishes every
	// earlier seq of its tables too (finishDMLLocked's through).
	for i, w := range ws {
		s.finishDMLLocked(w.Table, tables[i], seqs[i], err == nil)
	}
	s.dml.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("storage: append dml: %w", err)
	}
	s.recordAcked(count)
	// Acknowledge only once LastDML covers each seq: a FLUSH issued after
	// this returns reads LastDML as its target, so an earlier seq still
	// being synced by a concurrent appender must not hide this one.
	for i, w := range ws {
		if err := s.waitDurable(context.WithoutCancel(ctx), w.Table, tables[i], seqs[i]); err != nil {
			return nil, err
		}
	}
	return seqs, nil
}

// enqueueDMLLocked gives each record the next seq of its table, enqueues
// the batch and applies the records to the tails. On error nothing entered
// the pipeline and no seq is used.
func (s *Store) enqueueDMLLocked(b *pebble.Batch, ws []TableDMLWrite, segs []string, preps []tailPrep) ([]uint64, []*dmlTable, error) {
	seqs := make([]uint64, len(ws))
	tables := make([]*dmlTable, len(ws))
	next := map[uint32]uint64{}
	gated := multiTable(ws)
	for i, w := range ws {
		t, err := s.dmlTableLocked(w.Table)
		if err != nil {
			return nil, nil, err
		}
		if _, ok := next[w.Table]; !ok {
			next[w.Table] = t.next
		}
		seqs[i], tables[i] = next[w.Table], t
		next[w.Table]++
		key, value := dmlKey(w.Table, seqs[i]), w.Payload
		switch {
		case w.Load != nil:
			key, value = dmlLoadKey(w.Table, seqs[i]), encodeLoadRecord(w.Load, segs[i])
		case segs != nil && segs[i] != "":
			key, value = dmlRefKey(w.Table, seqs[i]), []byte(segs[i])
		}
		if err := b.Set(key, value, nil); err != nil {
			return nil, nil, fmt.Errorf("storage: append dml to table %d: %w", w.Table, err)
		}
		if gated {
			if err := b.Set(keyDMLGate(w.Table, seqs[i]), nil, nil); err != nil {
				return nil, nil, fmt.Errorf("storage: append dml to table %d: %w", w.Table, err)
			}
		}
	}
	if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		return nil, nil, fmt.Errorf("storage: append dml: %w", err)
	}
	// One hold of the tails' lock for the whole batch: a reader's latest
	// snapshot has all of a statement's or transaction's records, or none
	// (a COPY's pieces, each decoded here from its segment, are many).
	s.tails.mu.Lock()
	defer s.tails.mu.Unlock()
	for i, w := range ws {
		tables[i].next = max(tables[i].next, seqs[i]+1)
		if segs != nil && segs[i] != "" {
			tables[i].segments[seqs[i]] = segs[i]
		}
		if gated {
			tables[i].gates[seqs[i]] = struct{}{}
		}
		shared := false
		if w.Tail != nil {
			var err error
			if shared, err = s.applyRecordLocked(w.DMLWrite, seqs[i], preps[i]); err != nil {
				s.logger.Error("storage: apply dml record to table tail", "table", w.Table, "err", err)
				s.breakTailLocked(*w.Tail, seqs[i], err)
			}
		}
		if w.Payload == nil {
			// Only in its segment: readers go to the store, and the
			// records after it must not be served as if it were not there.
			tables[i].recent.clear()
			continue
		}
		tables[i].recent.add(DMLRecord{Seq: seqs[i], Payload: w.Payload, Gated: gated}, shared)
	}
	return seqs, tables, nil
}

// WaitDMLDurable waits until the table's records up to seq are synced.
func (s *Store) WaitDMLDurable(ctx context.Context, tableID uint32, seq uint64) error {
	s.dml.mu.Lock()
	t, err := s.dmlTableLocked(tableID)
	s.dml.mu.Unlock()
	if err != nil {
		return err
	}
	return s.waitDurable(ctx, tableID, t, seq)
}

// waitDurable waits until the table's durable watermark reaches seq. The
// wait is short: only appends that started before this one can be behind.
func (s *Store) waitDurable(ctx context.Context, tableID uint32, t *dmlTable, seq uint64) error {
	for {
		s.dml.mu.Lock()
		if s.dml.mu.tables[tableID] != t || t.durable >= seq {
			s.dml.mu.Unlock()
			return nil
		}
		ch := t.changed
		s.dml.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finishDMLLocked marks seq finished and advances the durable watermark over
// every contiguous finished seq. With through, seq's batch was synced, and
// so was every batch before it: they entered Pebble's commit pipeline in
// seq order (under the log mutex), the WAL syncs in the order it was
// written (a rotation syncs the old file first), and a failed write or sync
// fails every one after it. So every seq up to seq is finished, even where
// its appender has not been scheduled since the sync to say so. Without
// that, the appenders of one sync group woke each other in turn: each
// later one waited in waitDurable for the ones before it.
func (s *Store) finishDMLLocked(tableID uint32, t *dmlTable, seq uint64, through bool) {
	if s.dml.mu.tables[tableID] != t {
		return // the log was dropped meanwhile
	}
	if seq <= t.durable {
		if !through {
			// A failed append below a synced one: the order argued above
			// no longer holds (a Pebble upgrade, WAL failover), and readers
			// may have read the failed record.
			s.logger.Error("storage: a failed DML append lies below the durable mark", "table", tableID, "seq", seq, "durable", t.durable)
		}
		return // a later synced batch finished it
	}
	advanced := false
	if through {
		for k := range t.done {
			if k <= seq {
				delete(t.done, k)
			}
		}
		t.durable, advanced = seq, true
	} else {
		t.done[seq] = struct{}{}
	}
	for {
		if _, ok := t.done[t.durable+1]; !ok {
			break
		}
		delete(t.done, t.durable+1)
		t.durable++
		advanced = true
	}
	if advanced {
		close(t.changed)
		t.changed = make(chan struct{})
	}
}

// LastDML returns the highest seq of the table's log that is durable.
func (s *Store) LastDML(tableID uint32) (uint64, error) {
	s.dml.mu.Lock()
	defer s.dml.mu.Unlock()
	t, err := s.dmlTableLocked(tableID)
	if err != nil {
		return 0, err
	}
	return t.durable, nil
}

// ReadDML returns up to max durable records with seq ≥ fromSeq, in seq
// order, ending with a load record if it meets one. The latest records
// come from memory (dml_recent.go), older ones from Pebble. Payloads must
// not be modified: they may be shared with the log's memory and other
// readers.
func (s *Store) ReadDML(tableID uint32, fromSeq uint64, max int) ([]DMLRecord, error) {
	s.dml.mu.Lock()
	t, err := s.dmlTableLocked(tableID)
	if err != nil {
		s.dml.mu.Unlock()
		return nil, err
	}
	durable := t.durable
	recs, ok := t.recent.read(fromSeq, durable, max)
	s.dml.mu.Unlock()
	if ok || fromSeq > durable || max <= 0 {
		return throughLoad(recs), nil
	}
	if recs, err = s.readDMLStored(tableID, fromSeq, durable, max); err != nil || len(recs) == 0 {
		return recs, err
	}
	s.dml.mu.Lock()
	for i := range recs {
		_, recs[i].Gated = t.gates[recs[i].Seq]
	}
	s.dml.mu.Unlock()
	return recs, nil
}

// readDMLBytes bounds the payload bytes one read from the store returns
// (at least one record): a reader asking for 32 records of a bulk COPY's
// 8 MB pieces would otherwise hold a quarter of a gigabyte.
var readDMLBytes = 8 << 20 // a variable for tests

// readDMLStored reads records from Pebble, up to max of them or
// readDMLBytes of payload.
func (s *Store) readDMLStored(tableID uint32, fromSeq, durable uint64, max int) ([]DMLRecord, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: dmlKey(tableID, fromSeq),
		UpperBound: dmlKey(tableID, durable+1),
	})
	if err != nil {
		return nil, fmt.Errorf("storage: read dml of table %d: %w", tableID, err)
	}
	defer it.Close()
	var out []DMLRecord
	bytes := 0
	for ok := it.First(); ok && len(out) < max && bytes < readDMLBytes; ok = it.Next() {
		rec := DMLRecord{Seq: dmlSeqOf(it.Key())}
		if isDMLLoadKey(it.Key()) {
			if rec.Load, err = s.decodeLoad(it.Value()); err != nil {
				return nil, fmt.Errorf("storage: read dml %d of table %d: %w", rec.Seq, tableID, err)
			}
		} else if isDMLRefKey(it.Key()) {
			if rec.Payload, rec.Checked, err = s.readSegmentChecked(string(it.Value())); err != nil {
				return nil, fmt.Errorf("storage: read dml %d of table %d: %w", rec.Seq, tableID, err)
			}
		} else {
			rec.Payload = slices.Clone(it.Value())
		}
		bytes += len(rec.Payload)
		out = append(out, rec)
		if rec.Load != nil {
			break // see throughLoad
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("storage: read dml of table %d: %w", tableID, err)
	}
	return out, nil
}

// throughLoad returns recs up to their first load record: a reader that
// takes a load's file goes on past the records it covers, and must not
// have read their segments.
func throughLoad(recs []DMLRecord) []DMLRecord {
	for i := range recs {
		if recs[i].Load != nil {
			return recs[:i+1]
		}
	}
	return recs
}

// WaitDML returns once the table's log holds a durable record with seq >
// afterSeq, or with ctx's error. A table source tails its log with ReadDML
// and WaitDML, without polling.
func (s *Store) WaitDML(ctx context.Context, tableID uint32, afterSeq uint64) error {
	for {
		s.dml.mu.Lock()
		t, err := s.dmlTableLocked(tableID)
		if err != nil {
			s.dml.mu.Unlock()
			return err
		}
		if t.durable > afterSeq {
			s.dml.mu.Unlock()
			return nil
		}
		ch := t.changed
		s.dml.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TruncateDML deletes the table's records with seq ≤ throughSeq, once an
// epoch that recorded a position past them is committed. It is not synced:
// if a crash loses it, replay skips the records again by the committed
// position.
func (s *Store) TruncateDML(ctx context.Context, tableID uint32, throughSeq uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if throughSeq == math.MaxUint64 {
		throughSeq--
	}
	s.dml.mu.Lock()
	defer s.dml.mu.Unlock()
	t, err := s.dmlTableLocked(tableID)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(dmlKey(tableID, 0), dmlKey(tableID, throughSeq+1), nil); err != nil {
		return fmt.Errorf("storage: truncate dml of table %d: %w", tableID, err)
	}
	// The mark is the highest seq ever handed out, not throughSeq: it only
	// matters once the log is empty, and must keep seqs from being reused.
	mark := t.next - 1
	if err := b.Set(keyDMLHigh(tableID), binary.BigEndian.AppendUint64(nil, mark), nil); err != nil {
		return fmt.Errorf("storage: truncate dml of table %d: %w", tableID, err)
	}
	if len(t.gates) > 0 {
		if err := b.DeleteRange(keyDMLGate(tableID, 0), keyDMLGate(tableID, throughSeq+1), nil); err != nil {
			return fmt.Errorf("storage: truncate dml of table %d: %w", tableID, err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("storage: truncate dml of table %d: %w", tableID, err)
	}
	t.recent.dropThrough(throughSeq)
	t.dropGatesThrough(throughSeq)
	// If a crash loses the truncation, its records come back without
	// their segments: replay starts past them all the same.
	s.removeSegments(t.segmentsThrough(throughSeq))
	return nil
}

// payloadBytes is the size of the records ws write now (not those already
// in segments).
func payloadBytes(ws []TableDMLWrite) int {
	n := 0
	for _, w := range ws {
		n += len(w.Payload)
	}
	return n
}
