package source

import (
	"fmt"
	"math"

	"github.com/sluice-db/sluice/internal/storage"
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
	cur     *types.Chunk        // the record being cut; nil between records
	curSeq  uint64
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
		if r.cur == nil {
			ok, err := r.decodeNext()
			if err != nil || !ok {
				return b.Take(), r.pos, err
			}
		}
		n := r.cur.Capacity()
		start := r.pos.rows
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
		r.pos.rows = end
		if end >= n {
			r.pos = logPos{seq: r.curSeq}
			r.cur = nil
		}
	}
	return b.Take(), r.pos, nil
}

// decodeNext makes the next record current, skipping rows a previous run
// already emitted (pos.rows); ok is false when the log has nothing new.
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
		r.ahead = r.ahead[1:]
		c, err := DecodeDML(rec.Payload, r.schema)
		if err != nil {
			return false, fmt.Errorf("source: dml record %d of table %d: %w", rec.Seq, r.tableID, err)
		}
		if r.pos.rows >= c.Capacity() {
			// Fully emitted before a restart: consumed.
			r.pos = logPos{seq: rec.Seq}
			continue
		}
		r.cur, r.curSeq = c, rec.Seq
		return true, nil
	}
}
