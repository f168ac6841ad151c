package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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

// rawSource reads a raw spill in order for the seal's merge.
type rawSource struct {
	t    *StateTable
	f    vfs.File
	r    *bufio.Reader
	k, v []byte
	err  error
}

func (t *StateTable) rawSpillSource(sf *spillFile) (*rawSource, error) {
	f, err := t.store.fs.Open(sf.path)
	if err != nil {
		return nil, err
	}
	// The file may go on past the spill: an older, longer one's bytes.
	src := &rawSource{t: t, f: f, r: bufio.NewReaderSize(io.LimitReader(f, sf.size), 256<<10)}
	if err := src.next(); err != nil {
		src.close()
		return nil, err
	}
	return src, nil
}

func (s *rawSource) next() error {
	var hdr [2]byte
	if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
		s.k = nil
		if err != io.EOF {
			s.err = fmt.Errorf("storage: read spill: %w", err)
		}
		return s.err
	}
	s.k = appendVNodePrefix(s.k[:0], s.t.lay.desc.ID, binary.BigEndian.Uint16(hdr[:]))
	var err error
	if s.k, err = s.readBytes(s.k); err == nil {
		s.v, err = s.readBytes(s.v[:0])
	}
	if err != nil {
		s.k, s.err = nil, fmt.Errorf("storage: read spill: %w", err)
	}
	return s.err
}

// readBytes appends to dst the bytes of the next length-prefixed field.
func (s *rawSource) readBytes(dst []byte) ([]byte, error) {
	n, err := binary.ReadUvarint(s.r)
	if err != nil {
		return nil, err
	}
	dst = slices.Grow(dst, int(n))
	out := dst[:len(dst)+int(n)]
	if _, err := io.ReadFull(s.r, out[len(dst):]); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *rawSource) key() []byte   { return s.k }
func (s *rawSource) value() []byte { return s.v }
func (s *rawSource) done() bool    { return s.k == nil }
func (s *rawSource) close()        { _ = s.f.Close() }
