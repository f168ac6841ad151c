package engine

import (
	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/types"
)

// A large COPY into a table keyed by its hidden row id writes its rows
// once (docs/design/write-once-bulk.md): besides each piece's log segment,
// the statement builds the table's file of final keys (storage.BulkLoad)
// as it prepares the pieces, and its batch names the file in a load record
// before the pieces (FinishBulkLoad). The table source then stages the file for
// its epoch's commit and skips the pieces, and the table's actors add the
// file instead of sealing the rows again. The segments stay what the
// table's tail, the startup replay and any reader that cannot take the
// file read. Building the file is best effort: if it fails, the statement
// writes its pieces alone, as before.

// bulkLoadFrom is the fewest rows a statement builds a file for
// (Options.BulkLoadFrom); a smaller one writes its pieces alone.
func (e *Engine) bulkLoadFrom() int64 {
	if e.opts.BulkLoadFrom == 0 {
		return DefaultBulkLoadFrom
	}
	return e.opts.BulkLoadFrom
}

// StartBulkLoad makes the pieces Prepare encodes into buf also build a
// bulk load file of rel, when rel is a table keyed by its hidden row id
// that no view reads (a view's rows would have to be read back from the
// file). Only a statement outside a transaction block may: the block's
// pieces are the block's until its COMMIT.
func (e *Engine) StartBulkLoad(rel *catalog.Relation, buf *PieceBuffer) {
	if buf.load != nil || e.bulkLoadFrom() < 0 || !hasRowID(rel) || rel.Kind != catalog.KindTable ||
		!bulkLoadUnderViews && len(e.catalog.Dependents(rel.ID)) > 0 {
		return
	}
	load, err := e.store.NewBulkLoad(toDesc(rel))
	if err != nil {
		return // the pieces alone hold the rows
	}
	buf.load = load
}

// bulkLoadUnderViews lets a table that views read take a bulk load's
// file too (the crash test's writers, whose table has views).
var bulkLoadUnderViews = false

// addToLoad adds a prepared piece's rows (the inserts full, encoded in
// payload, w its write) to buf's load, or ends the load when it cannot.
// Before Prepare lets the payload go: the load keeps it.
func (buf *PieceBuffer) addToLoad(rel *catalog.Relation, full *types.Chunk, w *storage.DMLWrite, payload []byte) {
	ids, ok := full.Cols[len(full.Cols)-1].(*types.Vec[int64])
	if !w.Fresh || !ok || full.Cardinality() != len(ids.Vals) {
		buf.abortLoad()
		return
	}
	rows := w.Encoded
	if rows == nil {
		spans, err := source.RowSpans(payload, toDesc(rel).Types)
		if err != nil || spans == nil {
			buf.abortLoad()
			return
		}
		rows = &storage.EncodedRows{Buf: payload, Spans: spans}
	}
	if err := buf.load.Add(ids.Vals, *rows); err != nil {
		buf.load = nil // Add ended it
	}
}

// spareForLoad returns a buffer for the next piece: one whose rows the
// load spilled, or nil for a new one.
func (buf *PieceBuffer) spareForLoad() []byte {
	if buf.load == nil {
		return nil
	}
	return buf.load.Spare()
}

// abortLoad ends buf's load, if any.
func (buf *PieceBuffer) abortLoad() {
	if buf.load != nil {
		buf.load.Abort()
		buf.load = nil
	}
}

// FinishBulkLoad ends buf's load: when it holds at least bulkLoadFrom
// rows, it writes the file and returns the piece naming it, to be written
// first, before the covers pieces holding the same rows; otherwise nil.
func (e *Engine) FinishBulkLoad(rel *catalog.Relation, buf *PieceBuffer, covers int) *Prepared {
	load := buf.load
	buf.load = nil
	switch {
	case load == nil:
		return nil
	case load.Rows() < e.bulkLoadFrom() || covers == 0:
		load.Abort()
		return nil
	}
	path, err := e.store.NewLoadPath(rel.Table.ID)
	if err != nil {
		load.Abort()
		return nil
	}
	f, err := load.Finish(path)
	if err != nil {
		return nil // Finish removed what it wrote
	}
	return &Prepared{rel: rel, write: e.store.LoadWrite(f, covers)}
}

// isLoad reports whether p names a bulk load's file (FinishBulkLoad).
func (p *Prepared) isLoad() bool { return p.write.Load != nil }

// errLoadInBlock refuses a load piece staged in a transaction block.
var errLoadInBlock = sqlerr.New(sqlerr.Internal, "engine: a bulk load's file staged in a transaction block")
