package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A spill file is read once, in order, by the seal's merge, and a row of
// it now and then by Get; it is not needed after a crash (the log has the
// rows). So it is a plain run of records, not an sstable: no blocks, no
// index, no checksums, no sync. Writing an sstable instead cost 0.57 of
// the 0.94 CPU s a million-row bulk load spent spilling.
//
// Record: vnode (2 bytes BE), uvarint length and bytes of the key after
// its vnode prefix, uvarint length and bytes of the value. Get finds a row
// through sparse marks of the records (spill_index.go).

// writeRawSpill writes the rows of todo in order (key order) to a spill
// file (a pooled one, else path) with a mark every rawMarkEvery rows,
// through which Get finds a row (rawGet).
func (t *StateTable) writeRawSpill(path string, todo []*freshChunk, order []freshRef) (*spillFile, error) {
	f, file, err := t.store.createSpill(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	var hdr, key []byte
	var marks []rawMark
	off := 0
	for i, r := range order {
		fc := todo[r.chunk]
		v := fc.vals.row(r.k)
		vnode := fc.vnodes[r.k]
		key = t.appendFreshSuffix(key[:0], fc, r.k)
		if i%rawMarkEvery == 0 {
			marks = append(marks, rawMark{vnode: vnode, key: string(key), off: uint32(off)})
		}
		hdr = binary.BigEndian.AppendUint16(hdr[:0], vnode)
		hdr = append(binary.AppendUvarint(hdr, uint64(len(key))), key...)
		hdr = binary.AppendUvarint(hdr, uint64(len(v)))
		if _, err = w.Write(hdr); err == nil {
			_, err = w.Write(v)
		}
		if err != nil {
			break
		}
		off += len(hdr) + len(v)
	}
	if err == nil {
		err = w.Flush()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		_ = t.store.fs.Remove(file.path)
		return nil, err
	}
	size := int64(off)
	return &spillFile{path: file.path, owned: true, raw: true, size: size, fileSize: max(size, file.size), marks: slices.Clip(marks)}, nil
}

// readRawAt reads bytes [lo, hi) of a raw spill.
func readRawAt(fs vfs.FS, path string, lo, hi uint32) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, hi-lo)
	if _, err := f.ReadAt(buf, int64(lo)); err != nil {
		return nil, err
	}
	return buf, nil
}
