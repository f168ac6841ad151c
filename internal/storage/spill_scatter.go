package storage

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types/codec"
)

// A spill's records go in key order, vnode by vnode, but the rows arrive
// spread over every vnode (a row's vnode is a hash of its key), so taking
// them in key order reads the chunks' memory at random: a cache and TLB
// miss per row, a quarter of a second for a million bulk-loaded rows, the
// most of the spill's time. When the rows within every vnode are already
// in key order as stored (a table keyed by ascending row ids, a bulk load
// in key order), the spill reads each chunk in order instead: a counting
// sort by vnode. Each vnode's records have a known place in the file;
// they gather in a small buffer of the vnode's and are written at their
// place whenever it fills, so the spill holds no more than a buffer per
// vnode in memory.

// scatterBuf is the bytes a vnode's records gather before being written.
const scatterBuf = 16 << 10

var scatterBufs = sync.Pool{New: func() any { b := make([]byte, codec.VNodeCount*scatterBuf); return &b }}

// scatterSpill is a scattered spill being written.
type scatterSpill struct {
	t    *StateTable
	f    vfs.File
	todo []*freshChunk
	// at is where each vnode's next record goes in the file, first the
	// vnode's bytes; row each vnode's next record's index in key order.
	at     [codec.VNodeCount]int
	row    [codec.VNodeCount + 1]int
	used   [codec.VNodeCount]int // bytes gathered in each vnode's buffer
	keyLen int                   // the key suffix of a row id, when ids
	marks  []rawMark
	buf    []byte
	big    []byte // a record longer than a buffer
	key    []byte // a mark's key
}

// writeRawSpillScattered writes the rows of todo, stored in key order
// within every vnode, to a spill file as writeRawSpill does.
func (t *StateTable) writeRawSpillScattered(path string, todo []*freshChunk) (*spillFile, error) {
	f, file, err := t.store.createSpill(path)
	if err != nil {
		return nil, err
	}
	bp := scatterBufs.Get().(*[]byte)
	defer scatterBufs.Put(bp)
	s := &scatterSpill{t: t, f: f, todo: todo, buf: *bp}
	size := s.measure()
	err = s.write()
	if err = errors.Join(err, f.Close()); err != nil {
		_ = t.store.fs.Remove(file.path)
		return nil, err
	}
	slices.SortFunc(s.marks, func(a, b rawMark) int { return cmp.Compare(a.off, b.off) })
	return &spillFile{path: file.path, owned: true, raw: true, size: size, fileSize: max(size, file.size), marks: slices.Clip(s.marks)}, nil
}

// measure places each vnode's records and counts its rows; it returns
// the spill's length.
func (s *scatterSpill) measure() int64 {
	var scratch [16]byte
	s.keyLen = len(codec.AppendKeyInt64(scratch[:0], 0, codec.Order{}))
	var size [codec.VNodeCount]int
	for _, fc := range s.todo {
		for k, v := range fc.vnodes {
			s.row[v+1]++
			size[v] += rawRecordLen(s.suffixLen(fc, k), len(fc.vals.row(k)))
		}
	}
	off := 0
	for v := range codec.VNodeCount {
		s.row[v+1] += s.row[v]
		s.at[v], off = off, off+size[v]
	}
	return int64(off)
}

func (s *scatterSpill) suffixLen(fc *freshChunk, k int) int {
	if fc.ids == nil {
		return len(fc.keys.row(k))
	}
	return s.keyLen
}

// rawRecordLen is the length of a raw spill's record of a key suffix and
// a value of these lengths.
func rawRecordLen(key, value int) int {
	return 2 + uvarintLen(key) + key + uvarintLen(value) + value
}

func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// write reads the chunks in stored order, gathering each row's record in
// its vnode's buffer, and writes out what the buffers hold at the end.
func (s *scatterSpill) write() error {
	for _, fc := range s.todo {
		for k, v := range fc.vnodes {
			if s.row[v]%rawMarkEvery == 0 {
				s.mark(fc, k, v)
			}
			s.row[v]++
			if err := s.add(fc, k, v); err != nil {
				return err
			}
		}
	}
	for v := range codec.VNodeCount {
		if err := s.flush(uint16(v)); err != nil {
			return err
		}
	}
	return nil
}

// add puts row k of fc's record in vnode v's buffer, written out first
// when the record does not fit.
func (s *scatterSpill) add(fc *freshChunk, k int, v uint16) error {
	n := rawRecordLen(s.suffixLen(fc, k), len(fc.vals.row(k)))
	if s.used[v]+n > scatterBuf {
		if err := s.flush(v); err != nil {
			return err
		}
	}
	if n > scatterBuf {
		s.big = grown(s.big[:0], n)[:n]
		s.put(s.big, fc, k, v)
		_, err := s.f.WriteAt(s.big, int64(s.at[v]))
		s.at[v] += n
		return err
	}
	base := int(v) * scatterBuf
	s.put(s.buf[base+s.used[v]:base+s.used[v]+n], fc, k, v)
	s.used[v] += n
	return nil
}

// flush writes out vnode v's buffer at the vnode's place in the file.
func (s *scatterSpill) flush(v uint16) error {
	n := s.used[v]
	if n == 0 {
		return nil
	}
	base := int(v) * scatterBuf
	_, err := s.f.WriteAt(s.buf[base:base+n], int64(s.at[v]))
	s.at[v] += n
	s.used[v] = 0
	return err
}

// put writes row k of fc's record into dst, its exact length.
func (s *scatterSpill) put(dst []byte, fc *freshChunk, k int, v uint16) {
	binary.BigEndian.PutUint16(dst, v)
	p := 2
	if fc.ids == nil {
		key := fc.keys.row(k)
		p += binary.PutUvarint(dst[p:], uint64(len(key)))
		p += copy(dst[p:], key)
	} else {
		p += binary.PutUvarint(dst[p:], uint64(s.keyLen))
		p += len(codec.AppendKeyInt64(dst[p:p], fc.ids[k], s.t.lay.pkOrders[0]))
	}
	val := fc.vals.row(k)
	p += binary.PutUvarint(dst[p:], uint64(len(val)))
	copy(dst[p:], val)
}

// mark marks row k of fc, the next record of vnode v.
func (s *scatterSpill) mark(fc *freshChunk, k int, v uint16) {
	s.key = s.t.appendFreshSuffix(s.key[:0], fc, k)
	s.marks = append(s.marks, rawMark{vnode: v, key: string(s.key), off: uint32(s.at[v] + s.used[v])})
}

// storedInKeyOrder reports whether the rows of todo within every vnode
// are stored in ascending key order, each key once (freshSortedOrderStored
// then needs no sort), in one pass over the chunks in memory order.
func storedInKeyOrder(todo []*freshChunk) bool {
	var lastID [codec.VNodeCount]int64
	var lastKey [codec.VNodeCount][]byte
	var seen [codec.VNodeCount]bool
	for _, fc := range todo {
		for k, v := range fc.vnodes {
			if fc.ids != nil {
				if seen[v] && fc.ids[k] <= lastID[v] {
					return false
				}
				lastID[v] = fc.ids[k]
			} else {
				key := fc.keys.row(k)
				if seen[v] && bytes.Compare(key, lastKey[v]) <= 0 {
					return false
				}
				lastKey[v] = key
			}
			seen[v] = true
		}
	}
	return true
}
