package engine

import (
	"context"
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/types"
)

// A bulk statement (COPY) used to build all its rows into one chunk, then
// encode it, so the whole statement was held twice at once. Prepare lets
// it encode its rows piece by piece as it reads them: each piece is
// checked, given row ids and encoded into a log record of its own, and
// its chunk is let go; the records are written together at the end, in
// one synced batch (all or nothing), as a transaction's are.

// Prepared is one piece of a statement's rows, ready to be written.
type Prepared struct {
	rel   *catalog.Relation
	write storage.DMLWrite // without Tail
	// handedOff is set once a write took the piece (and its segment);
	// released once Release removed its segment.
	handedOff, released bool
}

// Prepare checks c (plain inserts into rel, or update pairs and deletes
// of rows its caller read under the table's lock: ON CONFLICT DO UPDATE,
// UPDATE, DELETE), assigns its row ids and encodes it as a log record. A
// piece of 64 KiB or more is written to its own log segment at once: of
// fresh inserts of a table keyed by its hidden row id, it keeps only where
// its rows lie; of any other, nothing, and its rows are decoded again from
// the segment when they are needed (Rows, and the table's tail as the
// record enters the log). Others keep the payload and the prepared chunk
// until they are written.
//
// Pieces written to segments are encoded into buf, when given, one after
// another (a statement's): pass nil for a piece of its own.
func (e *Engine) Prepare(ctx context.Context, rel *catalog.Relation, c *types.Chunk, buf *PieceBuffer) (*Prepared, error) {
	if !wellPaired(c) {
		return nil, sqlerr.New(sqlerr.Internal, "engine: Prepare takes update pairs whole")
	}
	full, err := e.prepare(ctx, rel, c)
	if err != nil {
		return nil, err
	}
	if buf == nil {
		buf = new(PieceBuffer)
	}
	if buf.b == nil {
		buf.b = []byte{} // reused: appendDML sizes it with room to spare
	}
	payload, err := appendDML(buf.b, rel, full)
	if err != nil {
		return nil, err
	}
	w := storage.DMLWrite{Payload: payload, Rows: full, Fresh: freshRows(rel, full)}
	if w.Encoded, err = encodedFresh(w.Fresh, payload, toDesc(rel).Types); err != nil {
		return nil, err
	}
	loading := buf.load != nil
	if loading {
		buf.addToLoad(rel, full, &w, payload)
	}
	// Any piece but fresh inserts is read back as rows: a keyed table's,
	// and an UPDATE's or DELETE's of a table keyed by its row id.
	readBack := (!hasRowID(rel) || !w.Fresh) && len(payload) >= encodedFreshFrom
	if w.Encoded != nil || readBack {
		// The piece goes to its segment now and is held by nobody: the
		// table's tail reads it back from there until its commit, and
		// the next piece is encoded into the same buffer.
		if w.Segment, err = e.store.WriteSegment(rel.Table.ID, payload); err != nil {
			return nil, err
		}
		w.Rows, w.Payload = nil, nil
		if w.Encoded != nil {
			// The rows are found in the segment through a mark every
			// sparseSpans rows, not a span each (storage.EncodedRows).
			w.Encoded.Buf = nil
			w.Encoded.Sparse(sparseSpans)
		} else {
			w.LoadRows = e.segmentRows(rel, w.Segment)
		}
		buf.b = payload[:0]
	} else {
		// A small piece keeps its payload until it is written: its own
		// copy, the buffer is the next piece's (or the load's).
		w.Payload = slices.Clone(payload)
	}
	if loading {
		buf.b = buf.spareForLoad() // the load keeps the payload
	}
	return &Prepared{rel: rel, write: w}, nil
}

// wellPaired reports whether c's update halves are whole pairs.
func wellPaired(c *types.Chunk) bool {
	idx := c.VisibleIndices()
	for k, i := range idx {
		switch c.Op(i) {
		case types.UpdateDelete:
			if k+1 == len(idx) || c.Op(idx[k+1]) != types.UpdateInsert {
				return false
			}
		case types.UpdateInsert:
			if k == 0 || c.Op(idx[k-1]) != types.UpdateDelete {
				return false
			}
		}
	}
	return true
}

// sparseSpans is the rows between two kept spans of a piece in a segment
// (a variable so that tests can make it small or turn it off with 1).
var sparseSpans = 64

// segmentRows returns a LoadRows that decodes the rows of rel's piece in
// segment name.
func (e *Engine) segmentRows(rel *catalog.Relation, name string) func() (*types.Chunk, error) {
	ts := toDesc(rel).Types
	return func() (*types.Chunk, error) {
		payload, err := e.store.ReadSegment(name)
		if err != nil {
			return nil, err
		}
		return source.DecodeDML(payload, ts)
	}
}

// Rows returns the piece's prepared rows (every column): those it keeps,
// or those decoded from its segment. A caller that checks their keys
// reads them here.
func (p *Prepared) Rows() (*types.Chunk, error) {
	if p.write.Rows != nil || p.write.LoadRows == nil {
		return p.write.Rows, nil
	}
	return p.write.LoadRows()
}

// PieceBuffer is the buffer a statement's bulk pieces are encoded into
// before they go to their segments (a 65 536-row piece of the bench's
// bids is 9 MB: a new one per piece was a tenth of the COPY's encoding
// time, in allocation and page faults; a sync.Pool lost it to the
// collections between pieces).
//
// load, when set, is the statement's bulk load (StartBulkLoad), given
// every piece as it is prepared.
type PieceBuffer struct {
	b    []byte
	load *storage.BulkLoad
}

// Release ends the buffer's bulk load, if any (the statement failed).
func (buf *PieceBuffer) Release() { buf.abortLoad() }

// KeepsRows reports whether the piece still holds the chunk it was
// prepared from (a small piece, kept until it is written). A piece that
// went to its segment does not: its caller may reuse the chunk's columns.
func (p *Prepared) KeepsRows() bool { return p.write.Rows != nil }

// Release removes the segment of a piece that was never handed to a
// write (the statement failed before it wrote its pieces).
func (p *Prepared) Release(e *Engine) {
	if p.write.Segment != "" && !p.handedOff {
		e.store.RemoveSegment(p.write.Segment)
		p.write.Segment, p.released = "", true
	}
}

// CheckKeyLocks fails with a KeyLockedError (Session.retryLocked waits
// for the block, then runs the statement again) when an open transaction
// block holds the key of a row of c: rows its caller checked against the
// table and will stage prepared (StagePrepared takes no key locks). A
// block's writer fails with 40001 when another block holds one; the
// block takes the keys when it stages the piece.
func (w *TableWriter) CheckKeyLocks(c *types.Chunk) error {
	return w.e.checkKeys(w.txn, w.rel, c)
}

// StagePrepared adds p to the records Commit writes. Its rows are plain
// inserts of new row ids, or changes of keys checked by the caller
// (CheckKeyLocks), so no key lock is taken. A transaction block's writer
// keeps the piece in the block instead (Txn.stagePiece), which holds the
// keys it changes.
func (w *TableWriter) StagePrepared(p *Prepared) error {
	if p.handedOff {
		return sqlerr.New(sqlerr.Internal, "engine: prepared rows staged after they were written")
	}
	if p.isLoad() && w.txn != nil {
		return errLoadInBlock
	}
	if p.rel.ID != w.rel.ID {
		return sqlerr.Errorf(sqlerr.Internal, "engine: rows prepared for %s staged for %s", p.rel.Name, w.rel.Name)
	}
	if w.txn != nil {
		return w.txn.stagePiece(w.rel, p)
	}
	w.pending = append(w.pending, pendingWrite{piece: p})
	return nil
}
