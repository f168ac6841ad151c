package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// A transaction block that writes several tables commits one record per
// table in one Pebble batch. Each table's source tails its own log, so
// without more, a barrier could reach one source before its record and
// another after: the views would see half of the transaction in one epoch
// and the rest in the next. So such records are gated: a key beside the
// log (written in the same batch, deleted with the log's truncation)
// marks each, ReadDML reports them (DMLRecord.Gated), and every barrier
// carries the DML horizon at its injection (DMLHorizon: for each table,
// the last seq enqueued), captured under the log mutex that also orders
// the batch's records. A source emits a gated record only while it drains
// up to the horizon of a barrier that covers it, just before forwarding
// that barrier; since a transaction's records are all below a horizon or
// all above it, every view sees all of the transaction in one epoch.

// keyDMLGate marks record seq of the table's log as gated.
func keyDMLGate(tableID uint32, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(dmlGatePrefix(tableID), seq)
}

func dmlGatePrefix(tableID uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{prefixSystem, 'g'}, tableID)
}

// loadGates reads the table's gated seqs (first use of its log).
func (s *Store) loadGates(tableID uint32) (map[uint64]struct{}, error) {
	p := dmlGatePrefix(tableID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("storage: read dml gates of table %d: %w", tableID, err)
	}
	defer it.Close()
	gates := map[uint64]struct{}{}
	for ok := it.First(); ok; ok = it.Next() {
		gates[binary.BigEndian.Uint64(it.Key()[len(p):])] = struct{}{}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("storage: read dml gates of table %d: %w", tableID, err)
	}
	return gates, nil
}

// DMLHorizon returns, for every table whose log is open, the last seq
// enqueued: a barrier's epoch holds exactly the gated records up to it.
func (s *Store) DMLHorizon() map[uint32]uint64 {
	s.dml.mu.Lock()
	defer s.dml.mu.Unlock()
	h := make(map[uint32]uint64, len(s.dml.mu.tables))
	for id, t := range s.dml.mu.tables {
		h[id] = t.next - 1
	}
	return h
}

// multiTable reports whether a batch writes more than one table's log.
func multiTable(ws []TableDMLWrite) bool {
	for _, w := range ws[1:] {
		if w.Table != ws[0].Table {
			return true
		}
	}
	return false
}

// dropGatesThrough forgets the gates of records truncated away.
func (t *dmlTable) dropGatesThrough(through uint64) {
	for seq := range t.gates {
		if seq <= through {
			delete(t.gates, seq)
		}
	}
}
