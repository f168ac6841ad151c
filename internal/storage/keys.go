package storage

import "encoding/binary"

// The key space. One byte tells which kind of key follows, so the three
// kinds never interleave and each can be scanned or range-deleted alone.
//
//	t | tableID (4B BE) | vnode (2B BE) | memcomparable pk   state rows
//	d | tableID (4B BE) | seq (8B BE)                      DML log records
//	s | name                                               system keys
//	c | tableID (4B BE) | vnode (2B BE)                    row counts (rowcount.go)
//
// Big-endian fixed-width integers keep numeric order equal to byte order, so
// a table's keys are contiguous and sorted by vnode, then by primary key.
const (
	prefixState  = 't'
	prefixDML    = 'd'
	prefixSystem = 's'
	// prefixRowCount keys a table's row counts apart from its rows, so
	// row scans never meet a count.
	prefixRowCount = 'c'
)

// System key names. The epoch marker is written in the same batch as the
// epoch's data, so reading it from a snapshot tells which epoch the snapshot
// holds.
var (
	keyCommittedEpoch = []byte{prefixSystem, 'e'}
	keyMetaPrefix     = []byte{prefixSystem, 'm', '/'}
)

// tablePrefix returns t|tableID.
func tablePrefix(tableID uint32) []byte {
	b := make([]byte, 0, 5)
	b = append(b, prefixState)
	return binary.BigEndian.AppendUint32(b, tableID)
}

// appendVNodePrefix appends t|tableID|vnode to dst.
func appendVNodePrefix(dst []byte, tableID uint32, vnode uint16) []byte {
	dst = append(dst, prefixState)
	dst = binary.BigEndian.AppendUint32(dst, tableID)
	return binary.BigEndian.AppendUint16(dst, vnode)
}

// stateKeyHeaderLen is the length of t|tableID|vnode.
const stateKeyHeaderLen = 1 + 4 + 2

// dmlPrefix returns d|tableID.
func dmlPrefix(tableID uint32) []byte {
	b := make([]byte, 0, 5)
	b = append(b, prefixDML)
	return binary.BigEndian.AppendUint32(b, tableID)
}

// dmlKey returns d|tableID|seq.
func dmlKey(tableID uint32, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(dmlPrefix(tableID), seq)
}

// dmlSeqOf extracts the sequence number from a DML key.
func dmlSeqOf(key []byte) uint64 {
	return binary.BigEndian.Uint64(key[5:])
}

// metaKey returns the system key that stores meta entry name.
func metaKey(name string) []byte {
	b := make([]byte, 0, len(keyMetaPrefix)+len(name))
	b = append(b, keyMetaPrefix...)
	return append(b, name...)
}

// prefixEnd returns the smallest key greater than every key with the given
// prefix, or nil when there is none (the prefix is all 0xff).
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}
