package storage

import "github.com/sluice-db/sluice/internal/types"

// A bulk statement's records entered the tails under the log's and the
// tails' locks, which every writer and every latest reader of every table
// takes: a keyed COPY's pieces were decoded from their segments and
// written to runs there, 2.5-5 s for eight million rows, during which
// every other statement waited. Nothing of that work needs the record's
// seq but the entries' seqs, so it is done before the locks
// (prepareTails), and a run carries its record's seq once, given under
// the lock (installRun).

// tailPrep is a record's tail work done before the locks: its rows read
// back from its segment, or a run built of them.
type tailPrep struct {
	rows *types.Chunk
	run  *tailRun
}

// prepareTails reads back the rows of ws's records that hold only a
// segment, and writes each record that qualifies (buildRecordRun: a bulk
// statement's pieces, an UPDATE's or DELETE's too) to a run;
// a record whose rows a block already wrote to a run (DMLWrite.Run) takes
// a copy of that one instead.
// A record it cannot prepare is left to applyRecordLocked, which tries
// again and breaks the tail if that fails too.
func (s *Store) prepareTails(ws []TableDMLWrite) []tailPrep {
	preps := make([]tailPrep, len(ws))
	for i, w := range ws {
		if w.Tail == nil || w.Fresh {
			continue
		}
		if w.Run != nil {
			preps[i].run = w.Run.run.copyForRecord()
			continue
		}
		rows := w.Rows
		if rows == nil && w.LoadRows != nil {
			var err error
			if rows, err = w.LoadRows(); err != nil {
				continue
			}
		}
		if rows == nil || rows.Cardinality() < tailRunFrom {
			if rows != w.Rows {
				preps[i].rows = rows // small: kept until the lock
			}
			continue
		}
		// A big record that does not become a run (a key twice, the disk
		// full) keeps nothing here, or a statement's pieces would all be
		// held decoded at once: applyRecordLocked reads it again.
		lay, err := newLayout(*w.Tail)
		if err != nil {
			continue
		}
		if r, err := s.buildRecordRun(lay, rows); err == nil && r != nil {
			preps[i].run = r
		}
	}
	return preps
}

// applyRecordLocked applies record seq, w, to its table's tail with the
// tails' lock held, using what prepareTails did for it. It reports
// whether the tail keeps w's encoded buffer (applyTail).
func (s *Store) applyRecordLocked(w DMLWrite, seq uint64, p tailPrep) (bool, error) {
	if p.run != nil {
		t, err := s.tailLocked(*w.Tail)
		if err != nil {
			return false, err
		}
		t.installRun(seq, p.run)
		return false, nil
	}
	// The layout was checked when the table was created; an error here is
	// a bug, and the record is in the log all the same.
	rows, err := w.Rows, error(nil)
	if p.rows != nil {
		rows = p.rows
	} else if rows == nil && !w.Fresh && w.LoadRows != nil {
		// Read back from the segment synced a moment ago; a failure is a
		// failing disk. The record is in the log all the same; the tail's
		// readers fail until it commits.
		if rows, err = w.LoadRows(); err != nil {
			return false, err
		}
	}
	return s.applyTailLocked(*w.Tail, seq, rows, w.Fresh, w.Encoded, w.Segment)
}
