package source

import (
	"fmt"
	"math"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// readAhead is how many log records one ReadDML fetches; it bounds the
// payloads held in memory besides the record being cut into chunks.
const readAhead = 32

// logReader cuts a table's DML log into chunks. It never blocks: when the
// log has nothing durable past its position it returns no chunk, and the
// source waits with store.WaitDML.
type logReader struct {
	store   *storage.Store
	tableID uint32
	schema  []types.Type

	pos     logPos              // after every row taken so far
	fetched uint64              // highest seq read from the store
	ahead   []storage.DMLRecord // fetched, not yet decoded
	// rec is the record being cut (nil between records), decoded a window
	// at a time: cur holds its rows from winStart on (nil when the next
	// window is not decoded yet).
	rec      *dmlCursor
	cur      *types.Chunk
	winStart int
	curSeq   uint64
	// gateLimit is the highest seq of a gated record (storage's
	// DMLRecord.Gated) the reader may start; atGate says the last take
	// stopped before a gated record beyond it.
	gateLimit uint64
	atGate    bool
	// b builds the chunks take returns; kept across takes so that its
	// columns are sized by the chunk before (a one-row INSERT's record
	// allocated 1026-row columns with a new builder per take).
	b    *types.Builder
	bMax int
	// freshApart: take ends a chunk before a fresh run's record, which
	// takeFresh passes on encoded, and before a load record, which
	// takeLoad passes on as its file; load is such a record (seq
	// loadSeq) when it is the next.
	freshApart bool
	load       *storage.LoadRecord
	loadSeq    uint64
	// taken is what the last takeLoad changed, for untakeLoad.
	taken *takenLoad
}

// takenLoad is a logReader's state before a takeLoad: with no record open
// and none read ahead (ReadDML ends a read at a load record), the rest of
// the reader is as it was.
type takenLoad struct {
	pos     logPos
	fetched uint64
	load    *storage.LoadRecord
	loadSeq uint64
}

func newLogReader(store *storage.Store, tableID uint32, schema []types.Type, from logPos) *logReader {
	return &logReader{store: store, tableID: tableID, schema: schema, pos: from, fetched: from.seq, gateLimit: math.MaxUint64}
}

// take returns a chunk of up to max rows (nil when the log has nothing new)
// and the position after it. An update pair is never cut in two, so that a
// barrier cannot fall between its halves.
func (r *logReader) take(max int) (*types.Chunk, logPos, error) {
	r.atGate = false
	// Room for max+1 rows (an update pair when max == 1) plus one spare:
	// Builder.Append hands back a chunk when it fills, and take collects
	// the chunk itself with Take.
	if r.b == nil || r.bMax != max {
		r.b, r.bMax = types.NewBuilder(r.schema, max+2), max
	}
	b := r.b
	for b.Len() < max {
		if r.cur == nil && r.freshApart && b.Len() > 0 {
			if ok, err := r.openNext(); err != nil || !ok || r.load != nil || r.rec.run != nil {
				return b.Take(), r.pos, err
			}
		}
		if r.cur == nil && r.load != nil {
			r.skipLoad() // read the rows it covers instead
		}
		if r.cur == nil {
			ok, err := r.nextWindow()
			if err != nil || !ok {
				return b.Take(), r.pos, err
			}
		}
		n := r.cur.Capacity()
		start := r.pos.rows - r.winStart
		end := min(n, start+max-b.Len())
		if end < n && r.cur.Op(end-1) == types.UpdateDelete {
			switch {
			case end-1 > start || b.Len() > 0:
				end-- // leave the pair for the next chunk
			default:
				end++ // max == 1: a pair is the smallest unit
			}
		}
		if end == start {
			break
		}
		b.AppendRange(r.cur, start, end)
		r.pos.rows = r.winStart + end
		if end >= n {
			r.cur = nil
			if r.pos.rows >= r.rec.rows {
				r.pos, r.rec = logPos{seq: r.curSeq}, nil
			}
		}
	}
	return b.Take(), r.pos, nil
}

// takeFresh returns up to max rows of a fresh run still encoded, and the
// position after them, when the next rows start a window of a fresh run
// record; otherwise nil (take then cuts a chunk, from where this left).
func (r *logReader) takeFresh(max int) (*stream.FreshRows, logPos, error) {
	r.atGate = false
	if r.cur != nil {
		return nil, r.pos, nil // a window is decoded already: finish it
	}
	if ok, err := r.openNext(); err != nil || !ok || r.load != nil {
		return nil, r.pos, err
	}
	f, err := r.rec.fresh(max)
	if err != nil {
		return nil, r.pos, fmt.Errorf("source: dml record %d of table %d: %w", r.curSeq, r.tableID, err)
	}
	if f == nil {
		return nil, r.pos, nil
	}
	r.pos.rows = r.rec.next
	if r.pos.rows >= r.rec.rows {
		r.pos, r.rec = logPos{seq: r.curSeq}, nil
	}
	return f, r.pos, nil
}

// decodeWindow is how many rows of a record are decoded at a time (a
// variable so that tests can make windows smaller than records).
var decodeWindow = 4 * types.DefaultChunkSize

// nextWindow decodes the next window of the current record, or of the
// next one; ok is false when the log has nothing new. A window never ends
// on the first half of an update pair unless its record does.
func (r *logReader) nextWindow() (bool, error) {
	if ok, err := r.openNext(); err != nil || !ok {
		return false, err
	}
	if r.load != nil {
		r.skipLoad()
		return r.nextWindow()
	}
	r.winStart = r.rec.next
	c, err := r.rec.window(decodeWindow)
	if err != nil {
		return false, fmt.Errorf("source: dml record %d of table %d: %w", r.curSeq, r.tableID, err)
	}
	if c == nil { // no row left: cannot happen once the record is open
		r.pos, r.rec = logPos{seq: r.curSeq}, nil
		return r.nextWindow()
	}
	r.cur = c
	return true, nil
}

// openNext opens the next record unless one is open (r.rec, or r.load
// for a load record when freshApart); ok is false when the log has
// nothing new.
func (r *logReader) openNext() (bool, error) {
	if r.rec != nil || r.load != nil {
		return true, nil
	}
	return r.decodeNext()
}

// takeLoad returns the file of the load record that is next, and the
// position past the records it covers (which the reader then skips), or
// nil when the next rows are not a load's.
func (r *logReader) takeLoad() (*storage.LoadedFile, logPos, error) {
	r.atGate = false
	if r.cur != nil {
		return nil, r.pos, nil
	}
	if ok, err := r.openNext(); err != nil || !ok || r.load == nil {
		return nil, r.pos, err
	}
	r.taken = &takenLoad{pos: r.pos, fetched: r.fetched, load: r.load, loadSeq: r.loadSeq}
	f := &r.load.File
	last := r.loadSeq + uint64(r.load.Covers)
	r.pos, r.load = logPos{seq: last}, nil
	// Not one covered record is read: ReadDML ended its read at the load
	// record, and the next starts past the covered ones.
	r.fetched = max(r.fetched, last)
	return f, r.pos, nil
}

// untakeLoad puts the reader back as it was before the last takeLoad,
// whose file was not emitted: the next take reads the covered records.
func (r *logReader) untakeLoad() {
	if t := r.taken; t != nil {
		r.pos, r.fetched, r.load, r.loadSeq, r.taken = t.pos, t.fetched, t.load, t.loadSeq, nil
	}
}

// skipLoad passes over the load record that is next: the records it
// covers follow, and hold the same rows.
func (r *logReader) skipLoad() {
	r.pos, r.load = logPos{seq: r.loadSeq}, nil
}

// decodeNext opens the next record, skipping rows a previous run already
// emitted (pos.rows); ok is false when the log has nothing new.
func (r *logReader) decodeNext() (bool, error) {
	for {
		if len(r.ahead) == 0 {
			durable, err := r.store.LastDML(r.tableID)
			if err != nil {
				return false, fmt.Errorf("source: read dml log of table %d: %w", r.tableID, err)
			}
			recs, err := r.store.ReadDML(r.tableID, r.fetched+1, readAhead)
			if err != nil {
				return false, fmt.Errorf("source: read dml log of table %d: %w", r.tableID, err)
			}
			if len(recs) == 0 {
				// A failed append leaves a hole below the durable mark;
				// skip it, or WaitDML(fetched) would return at once, forever.
				r.fetched = max(r.fetched, durable)
				return false, nil
			}
			r.ahead = recs
			r.fetched = recs[len(recs)-1].Seq
		}
		rec := r.ahead[0]
		if rec.Gated && rec.Seq > r.gateLimit {
			r.atGate = true
			return false, nil
		}
		// Clear the slot: the array outlives the record, and a payload can
		// be a hundred megabytes.
		r.ahead[0] = storage.DMLRecord{}
		r.ahead = r.ahead[1:]
		switch {
		case rec.Load != nil && r.freshApart && r.pos.rows == 0:
			r.load, r.loadSeq = rec.Load, rec.Seq
			return true, nil
		case rec.Load != nil:
			// The records it covers follow, and hold the same rows.
			r.pos = logPos{seq: rec.Seq}
			continue
		}
		cur, err := openCheckedDML(rec.Payload, r.schema, rec.Checked)
		if err == nil {
			err = cur.skip(r.pos.rows)
		}
		if err != nil {
			return false, fmt.Errorf("source: dml record %d of table %d: %w", rec.Seq, r.tableID, err)
		}
		if r.pos.rows >= cur.rows {
			// Fully emitted before a restart: consumed.
			r.pos = logPos{seq: rec.Seq}
			continue
		}
		r.rec, r.curSeq = cur, rec.Seq
		return true, nil
	}
}
