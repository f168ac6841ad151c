package storage

import (
	"encoding/binary"
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

// rawMark says that the record at off of a raw spill has key (vnode, id).
type rawMark struct {
	id    int64
	off   uint32
	vnode uint16
}

// after reports whether m's key sorts after (vnode, id).
func (m rawMark) after(vnode uint16, id int64) bool {
	return m.vnode > vnode || m.vnode == vnode && m.id > id
}

// rawGet returns the value of (vnode, id) in the raw spill, if it holds it.
func (f *spillFile) rawGet(fs vfs.FS, vnode uint16, id int64) ([]byte, bool, error) {
	i := sort.Search(len(f.marks), func(i int) bool { return f.marks[i].after(vnode, id) }) - 1
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
		if len(b) < 10 {
			return nil, false, fmt.Errorf("storage: spill %s: a record cut short", f.path)
		}
		v, rid := binary.BigEndian.Uint16(b), int64(binary.BigEndian.Uint64(b[2:]))
		n, k := binary.Uvarint(b[10:])
		if k <= 0 || uint64(len(b)-10-k) < n {
			return nil, false, fmt.Errorf("storage: spill %s: a bad record length", f.path)
		}
		val := b[10+k : 10+k+int(n)]
		switch {
		case v == vnode && rid == id:
			return val, true, nil
		case (rawMark{vnode: v, id: rid}).after(vnode, id):
			return nil, false, nil
		}
		b = b[10+k+int(n):]
	}
	return nil, false, nil
}
