package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A spilled chunk of fresh rows kept each row's id, vnode and value
// offsets in memory (18 bytes a row) so that Get could find it: a ten
// million row INSERT … SELECT held 180 MB of them until its seal. A raw
// spill is in key order, so a mark every rawMarkEvery records (its key
// and offset) is enough: Get reads the stretch between two marks and
// looks through it. The chunks keep only their first and last id.

// rawMarkEvery is the records between two marks of a raw spill (a
// variable so that tests can mark every record or few).
var rawMarkEvery = 64

// rawMark says that the record at off of a raw spill has key (vnode,
// key), key being what follows the vnode prefix.
type rawMark struct {
	key   string
	off   uint32
	vnode uint16
}

// after reports whether m's key sorts after (vnode, key).
func (m rawMark) after(vnode uint16, key []byte) bool {
	return m.vnode > vnode || m.vnode == vnode && m.key > string(key)
}

// rawGet returns the value of (vnode, key) in the raw spill, if it holds
// it.
func (f *spillFile) rawGet(fs vfs.FS, vnode uint16, key []byte) ([]byte, bool, error) {
	i := sort.Search(len(f.marks), func(i int) bool { return f.marks[i].after(vnode, key) }) - 1
	if i < 0 {
		return nil, false, nil
	}
	hi := uint32(f.size)
	if i+1 < len(f.marks) {
		hi = f.marks[i+1].off
	}
	b, err := readRawAt(fs, f.path, f.marks[i].off, hi)
	if err != nil {
		return nil, false, err
	}
	for len(b) > 0 {
		v, k, val, rest, err := rawRecord(b)
		if err != nil {
			return nil, false, fmt.Errorf("storage: spill %s: %w", f.path, err)
		}
		switch {
		case v == vnode && bytes.Equal(k, key):
			return val, true, nil
		case (rawMark{vnode: v, key: string(k)}).after(vnode, key):
			return nil, false, nil
		}
		b = rest
	}
	return nil, false, nil
}

// rawRecord splits the raw spill record at the head of b.
func rawRecord(b []byte) (vnode uint16, key, val, rest []byte, err error) {
	if len(b) < 2 {
		return 0, nil, nil, nil, errRawRecord
	}
	vnode, b = binary.BigEndian.Uint16(b), b[2:]
	if key, b, err = rawField(b); err == nil {
		val, b, err = rawField(b)
	}
	return vnode, key, val, b, err
}

// rawField splits the length-prefixed field at the head of b.
func rawField(b []byte) ([]byte, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, errRawRecord
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

var errRawRecord = errors.New("a record cut short")
