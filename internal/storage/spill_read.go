package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The seal's merge reads each spill once, in order (spill_raw.go has the
// record format). A record's value is handed out in place, from a block
// of the file read at a time, not copied: the merge copies it into the
// sealed file's block at once, before asking for the next record. The
// blocks come from a pool, as a seal merges many spills.

// rawBlock is the bytes of a spill read at a time (more for a record
// longer than that; a variable so that tests can make records cross
// blocks).
var rawBlock = 256 << 10

var rawBlocks = sync.Pool{New: func() any { b := make([]byte, rawBlock); return &b }}

// rawSource reads a raw spill in order for the seal's merge.
type rawSource struct {
	t        *StateTable
	f        vfs.File
	block    *[]byte // pooled, when buf is its
	buf      []byte
	pos, end int   // unread bytes are buf[pos:end]
	off      int64 // where the file's unread bytes start
	size     int64 // the spill's length (the file may go on: spill_pool.go)
	k, v     []byte
}

func (t *StateTable) rawSpillSource(sf *spillFile) (*rawSource, error) {
	f, err := t.store.fs.Open(sf.path)
	if err != nil {
		return nil, err
	}
	block := rawBlocks.Get().(*[]byte)
	src := &rawSource{t: t, f: f, block: block, buf: (*block)[:min(rawBlock, len(*block))], size: sf.size}
	if err := src.next(); err != nil {
		src.close()
		return nil, err
	}
	return src, nil
}

// next reads the next record; key and value are valid until the next call.
func (s *rawSource) next() error {
	kbuf := s.k[:0] // reused: each source's key is its own
	s.k, s.v = nil, nil
	if s.pos == s.end && s.off >= s.size {
		return nil // done
	}
	if err := s.ensure(2); err != nil {
		return s.fail(err)
	}
	vnode := binary.BigEndian.Uint16(s.buf[s.pos:])
	s.pos += 2
	key, err := s.field()
	if err != nil {
		return s.fail(err)
	}
	s.k = append(appendVNodePrefix(kbuf, s.t.lay.desc.ID, vnode), key...)
	if s.v, err = s.field(); err != nil {
		return s.fail(err)
	}
	return nil
}

func (s *rawSource) fail(err error) error {
	s.k, s.v = nil, nil
	return fmt.Errorf("storage: read spill: %w", err)
}

// field returns the next length-prefixed field, in place.
func (s *rawSource) field() ([]byte, error) {
	if err := s.ensure(min(binary.MaxVarintLen64, s.left())); err != nil {
		return nil, err
	}
	n, w := binary.Uvarint(s.buf[s.pos:s.end])
	if w <= 0 || n > uint64(s.left()) {
		return nil, errors.New("corrupt record length")
	}
	s.pos += w
	if err := s.ensure(int(n)); err != nil {
		return nil, err
	}
	f := s.buf[s.pos : s.pos+int(n)]
	s.pos += int(n)
	return f, nil
}

// left is the spill's bytes not yet parsed.
func (s *rawSource) left() int { return s.end - s.pos + int(s.size-s.off) }

// ensure makes at least n unparsed bytes lie in buf[pos:end], moving
// them to the front and reading more of the file (a larger buffer for a
// record longer than a block).
func (s *rawSource) ensure(n int) error {
	if s.end-s.pos >= n {
		return nil
	}
	if n > s.left() {
		return io.ErrUnexpectedEOF
	}
	if n > len(s.buf) {
		grown := make([]byte, n)
		s.end = copy(grown, s.buf[s.pos:s.end])
		s.buf = grown
	} else {
		s.end = copy(s.buf, s.buf[s.pos:s.end])
	}
	s.pos = 0
	want := min(int64(len(s.buf)-s.end), s.size-s.off)
	got, err := s.f.ReadAt(s.buf[s.end:s.end+int(want)], s.off)
	if got < int(want) {
		return shortRead(err)
	}
	s.end, s.off = s.end+got, s.off+int64(got)
	return nil
}

// shortRead is the error of a read that came back short: its own, or
// io.ErrUnexpectedEOF for none or io.EOF (the spill ends early).
func shortRead(err error) error {
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return io.ErrUnexpectedEOF
}

func (s *rawSource) key() []byte   { return s.k }
func (s *rawSource) value() []byte { return s.v }
func (s *rawSource) done() bool    { return s.k == nil }

func (s *rawSource) close() {
	_ = s.f.Close()
	if s.block != nil {
		rawBlocks.Put(s.block)
		s.block, s.buf = nil, nil
	}
}
