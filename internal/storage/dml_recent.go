package storage

// A table source tails its table's DML log: it reads each record soon
// after it is synced. Reading it back from Pebble costs an iterator over
// every level whose key range overlaps the log's, a seek and, past the
// memtable, block reads and decompression, which a profile of single-row
// INSERTs found to be a quarter of the server's CPU once other tables'
// data had been flushed around the log's keys. So the log keeps its
// latest records in memory too, as they are appended, and ReadDML serves
// a read that starts inside them from there. Records leave it once a
// reader has asked for a later seq, when truncation covers them, and when
// it would hold more than recentDMLBytes (oldest first); a read that
// starts before it falls back to Pebble, so the memory is a cache: bounded,
// and never needed for correctness.

// recentDMLBytes bounds the payload bytes one table's log keeps in memory
// (a variable so that tests can make it small).
var recentDMLBytes = 16 << 20

// recentDML is a table's latest log records: contiguous seqs, in order.
type recentDML struct {
	recs []DMLRecord
	// counted[i] is the bytes recs[i] counts against recentDMLBytes.
	counted []int
	bytes   int
}

// add appends the record just enqueued with the next seq. A record too big
// for the cache, or one that does not follow the last, restarts it. A
// shared record's payload is held elsewhere until a commit covers it (a
// fresh run of the table's tail keeps it): it costs the cache nothing, and
// serving it from memory spares the source reading a copy from disk while
// the tail holds this one.
func (r *recentDML) add(rec DMLRecord, shared bool) {
	if n := len(r.recs); n > 0 && r.recs[n-1].Seq+1 != rec.Seq {
		r.clear()
	}
	size := len(rec.Payload)
	if shared {
		size = 0
	}
	if size > recentDMLBytes/2 {
		r.clear()
		return
	}
	r.recs = append(r.recs, rec)
	r.counted = append(r.counted, size)
	r.bytes += size
	for r.bytes > recentDMLBytes {
		r.dropFirst()
	}
}

// read returns up to max records from fromSeq through durable, and false
// when fromSeq is not in memory (the reader must go to Pebble). Records
// before fromSeq are dropped: the reader is past them.
func (r *recentDML) read(fromSeq, durable uint64, max int) ([]DMLRecord, bool) {
	if len(r.recs) == 0 || fromSeq < r.recs[0].Seq || fromSeq > r.recs[len(r.recs)-1].Seq+1 {
		return nil, false
	}
	r.dropThrough(fromSeq - 1)
	var out []DMLRecord
	for _, rec := range r.recs {
		if rec.Seq > durable || len(out) >= max {
			break
		}
		out = append(out, rec)
	}
	return out, true
}

// dropThrough forgets the records with seq ≤ through.
func (r *recentDML) dropThrough(through uint64) {
	for len(r.recs) > 0 && r.recs[0].Seq <= through {
		r.dropFirst()
	}
}

func (r *recentDML) dropFirst() {
	r.bytes -= r.counted[0]
	r.recs[0] = DMLRecord{}
	r.recs, r.counted = r.recs[1:], r.counted[1:]
	if len(r.recs) == 0 {
		r.recs, r.counted = nil, nil
	}
}

func (r *recentDML) clear() { *r = recentDML{} }
