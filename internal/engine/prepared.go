package engine

import (
	"context"
	"sync"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
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
	// handedOff is set once a write took the piece (and its segment).
	handedOff bool
}

// Prepare checks c (plain inserts into rel), assigns its row ids and
// encodes it as a log record. A piece of 64 KiB or more of a table keyed
// by its hidden row id is written to its own log segment at once and
// keeps only where its rows lie; others keep the payload and the
// prepared chunk until they are written.
func (e *Engine) Prepare(ctx context.Context, rel *catalog.Relation, c *types.Chunk) (*Prepared, error) {
	if hasRetraction(c) {
		return nil, sqlerr.New(sqlerr.Internal, "engine: Prepare takes plain inserts only")
	}
	full, err := e.prepare(ctx, rel, c)
	if err != nil {
		return nil, err
	}
	buf, _ := piecePayloads.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	payload, err := appendDML(*buf, rel, full)
	if err != nil {
		return nil, err
	}
	w := storage.DMLWrite{Payload: payload, Rows: full, Fresh: freshRows(rel, full)}
	if w.Encoded, err = encodedFresh(w.Fresh, payload, toDesc(rel).Types); err != nil {
		return nil, err
	}
	if w.Encoded != nil {
		// The piece goes to its segment now and is held by nobody: the
		// table's tail reads it back from there until its commit, and
		// the next piece is encoded into the same buffer.
		if w.Segment, err = e.store.WriteSegment(rel.Table.ID, payload); err != nil {
			return nil, err
		}
		w.Rows, w.Payload, w.Encoded.Buf = nil, nil, nil
		*buf = payload[:0]
		piecePayloads.Put(buf)
	}
	return &Prepared{rel: rel, write: w}, nil
}

// piecePayloads holds the buffers bulk pieces are encoded into before
// they go to their segments (a 65 536-row piece of the bench's bids is
// 9 MB: a new one per piece was a tenth of the COPY's encoding time, in
// allocation and page faults).
var piecePayloads sync.Pool

// KeepsRows reports whether the piece still holds the chunk it was
// prepared from (a small piece, kept until it is written). A piece that
// went to its segment does not: its caller may reuse the chunk's columns.
func (p *Prepared) KeepsRows() bool { return p.write.Rows != nil }

// Release removes the segment of a piece that was never handed to a
// write (the statement failed before it wrote its pieces).
func (p *Prepared) Release(e *Engine) {
	if p.write.Segment != "" && !p.handedOff {
		e.store.RemoveSegment(p.write.Segment)
		p.write.Segment = ""
	}
}

// StagePrepared adds p to the records Commit writes. Its rows are plain
// inserts of new row ids or keys checked by the caller, so no key lock is
// taken; a transaction block stages chunks instead (Stage).
func (w *TableWriter) StagePrepared(p *Prepared) error {
	if w.txn != nil {
		return sqlerr.New(sqlerr.Internal, "engine: prepared rows inside a transaction block")
	}
	if p.handedOff {
		return sqlerr.New(sqlerr.Internal, "engine: prepared rows staged after they were written")
	}
	if p.rel.ID != w.rel.ID {
		return sqlerr.Errorf(sqlerr.Internal, "engine: rows prepared for %s staged for %s", p.rel.Name, w.rel.Name)
	}
	w.prepared = append(w.prepared, p)
	return nil
}
